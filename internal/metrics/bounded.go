package metrics

import (
	"strings"
	"sync"
)

// Values a bounded label takes in place of the value given.
const (
	// ValueOther stands for every value after the first max distinct ones.
	ValueOther = "other"
	// ValueUnknown stands for an empty value.
	ValueUnknown = "unknown"
)

// maxValueBytes cuts a value that long: label values come from objects on targets.
const maxValueBytes = 256

// boundedValues keeps a label to a bounded set of values, so that what the fleet's users do
// cannot grow the number of series without limit: the first max distinct values are kept as
// they are, and every later one is ValueOther. A value once kept is never forgotten, so the
// process reports at most max values plus ValueOther and ValueUnknown for its whole life.
// Safe for concurrent use.
type boundedValues struct {
	mu   sync.Mutex
	max  int
	kept map[string]bool
}

func newBoundedValues(max int) *boundedValues {
	return &boundedValues{max: max, kept: map[string]bool{}}
}

// setMax changes the bound. Values already kept stay, even above a lower bound.
func (b *boundedValues) setMax(max int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.max = max
}

// value is what v is reported as: ValueUnknown when empty, v (valid UTF-8, cut at
// maxValueBytes) while it is one of the first max distinct values, ValueOther after.
func (b *boundedValues) value(v string) string {
	if v == "" {
		return ValueUnknown
	}
	v = strings.ToValidUTF8(v, "\uFFFD")
	if len(v) > maxValueBytes {
		v = strings.ToValidUTF8(v[:maxValueBytes], "")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.kept[v] {
		return v
	}
	if len(b.kept) >= b.max {
		return ValueOther
	}
	b.kept[v] = true
	return v
}

package metrics

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestBoundedValues(t *testing.T) {
	b := newBoundedValues(2)
	steps := []struct{ in, want string }{
		{"", ValueUnknown},
		{"alice", "alice"},
		{"bob", "bob"},
		{"carol", ValueOther},
		{"alice", "alice"},
		{"", ValueUnknown},
		{"dave", ValueOther},
		{"bob", "bob"},
	}
	for i, s := range steps {
		if got := b.value(s.in); got != s.want {
			t.Errorf("step %d: value(%q) = %q, want %q", i, s.in, got, s.want)
		}
	}

	b.setMax(3)
	if got := b.value("carol"); got != "carol" {
		t.Errorf("after raising the bound: value(carol) = %q, want carol", got)
	}
	b.setMax(1)
	if got := b.value("alice"); got != "alice" {
		t.Errorf("after lowering the bound: value(alice) = %q, want alice (kept values stay)", got)
	}
	if got := b.value("erin"); got != ValueOther {
		t.Errorf("after lowering the bound: value(erin) = %q, want other", got)
	}
}

func TestBoundedValuesBadInput(t *testing.T) {
	b := newBoundedValues(10)
	long := b.value(strings.Repeat("é", 1000))
	if len(long) > maxValueBytes || !utf8.ValidString(long) {
		t.Errorf("a long value is reported as %d bytes (valid UTF-8: %v), want at most %d", len(long), utf8.ValidString(long), maxValueBytes)
	}
	if got := b.value("bad\xffbyte"); !utf8.ValidString(got) {
		t.Errorf("invalid UTF-8 reported as %q", got)
	}
}

// TestBoundedValuesConcurrent: however many goroutines report however many users, no more than
// max distinct values come out besides other and unknown.
func TestBoundedValuesConcurrent(t *testing.T) {
	b := newBoundedValues(5)
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				v := b.value(fmt.Sprintf("user-%d-%d", g, i))
				mu.Lock()
				seen[v] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	delete(seen, ValueOther)
	if len(seen) != 5 {
		t.Errorf("%d distinct values besides other, want 5: %v", len(seen), seen)
	}
}

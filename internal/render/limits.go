package render

import (
	"fmt"
	"time"
)

// Defaults of Limits.
const (
	// DefaultTimeout bounds the time one render spends in templates,
	// Kustomize and Helm's engine.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxOutputBytes bounds the text one render's templates write.
	DefaultMaxOutputBytes = 16 << 20
	// DefaultMaxObjects bounds the objects one render yields.
	DefaultMaxObjects = 10_000
	// DefaultMaxSteps bounds the template work of one render: range
	// iterations plus executions of named templates, template files and tpl
	// strings.
	DefaultMaxSteps = 1_000_000
)

// Caps on what one template function call may return. They are not
// configurable: a string over MaxValueBytes cannot fit in any object, and no
// manifest needs a generated list longer than MaxListLength.
const (
	// MaxValueBytes is the longest string a template function may return
	// (repeat, indent, printf, toJson, b64enc...): MaxObjectSize.
	MaxValueBytes = MaxObjectSize
	// MaxListLength is the longest list a template function may return
	// (until, untilStep, seq, splitList, concat, append...).
	MaxListLength = 10_000
	// maxTransientBytes bounds what a function may allocate before its result
	// is checked against MaxValueBytes: the input of a serialiser, or a
	// result whose exact size cannot be known beforehand.
	maxTransientBytes = 4 * MaxValueBytes
)

// Limits is the budget of one render. Every path is bounded by it: Go
// templates of values and manifests, Kustomize, and Helm charts. Going over a
// limit fails the render with ReasonRenderLimitExceeded, which is not
// transient: the declaration has to change. A zero field means its default.
type Limits struct {
	// Timeout bounds the time spent rendering: templates, Kustomize and Helm's
	// engine. Fetching a chart is not counted; the ChartSource has timeouts of
	// its own. Default DefaultTimeout.
	Timeout time.Duration
	// MaxOutputBytes bounds the text templates write in one render, all
	// templates together (values, manifests, Kustomize files; for Helm, an
	// estimate counting the text of loop bodies and every printed value,
	// then the exact size of the rendered manifests). Default
	// DefaultMaxOutputBytes.
	MaxOutputBytes int
	// MaxObjects bounds the objects one render yields. Default
	// DefaultMaxObjects.
	MaxObjects int
	// MaxSteps bounds range iterations plus executions of named templates
	// (template, include), template files and tpl strings, all templates of
	// the render together. Default DefaultMaxSteps.
	MaxSteps int
}

// withDefaults returns l with every zero or negative field set to its default.
func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if l.MaxObjects <= 0 {
		l.MaxObjects = DefaultMaxObjects
	}
	if l.MaxSteps <= 0 {
		l.MaxSteps = DefaultMaxSteps
	}
	return l
}

// byteSize writes a limit for messages: "16 MiB", "512 KiB", "1000 bytes".
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// Messages of the limits. They name the limit and what to change, and never
// quote template text, values or sizes taken from them.
func valueTooLarge(fn string) string {
	return fmt.Sprintf("%s would return more than %s, the limit for one value; make its input or count smaller", fn, byteSize(MaxValueBytes))
}

func listTooLong(fn string) string {
	return fmt.Sprintf("%s would return more than %d elements, the limit for one list; iterate over fewer elements", fn, MaxListLength)
}

func (l Limits) stepsExceeded() string {
	return fmt.Sprintf("templates ran more than %d loop iterations and template calls, the limit for one render; remove nested loops or split the service", l.MaxSteps)
}

func (l Limits) outputExceeded() string {
	return fmt.Sprintf("templates wrote more than %s, the limit for one render; render less or split the service", byteSize(l.MaxOutputBytes))
}

func (l Limits) timedOut() string {
	return fmt.Sprintf("rendering took longer than %s, the limit for one render; simplify the templates (nested loops, large values) or split the service", l.Timeout)
}

func (l Limits) tooManyObjects() string {
	return fmt.Sprintf("the source renders more than %d objects, the limit for one render; split the service", l.MaxObjects)
}

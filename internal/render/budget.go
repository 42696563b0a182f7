package render

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"text/template"
	"time"
)

// budget is what is left of the Limits of one render. Every template of the
// render draws on it: the writer Go templates execute into, the step and print
// calls the instrumentation adds (instrument.go), and the capped template
// functions (funcs.go). It is safe for concurrent use: a Helm render runs on
// its own goroutine, which may outlive the render that gave up on it.
type budget struct {
	limits Limits
	// ctx is the caller's context; its end is not a limit (Render returns
	// ctx's error).
	ctx context.Context
	// deadline is when the render's time is up, in Unix nanoseconds. It moves
	// on by the time spent fetching a chart.
	deadline atomic.Int64
	steps    atomic.Int64
	output   atomic.Int64
	checks   atomic.Uint32
	// failed is the first limit gone over; once set, every later check fails
	// with it, so a template that ignores an error cannot go on.
	failed atomic.Pointer[limitError]

	// The template functions of the render, closures over the budget, built
	// on first use (funcs.go).
	goOnce, helmOnce sync.Once
	goMap, helmMap   template.FuncMap
}

// limitError is a limit of the render gone over. Its message names the limit
// and what to change; it never quotes template text or values.
type limitError struct {
	msg string
	// timeout: the time ran out, which a busy controller may cause as much as the templates.
	timeout bool
}

func (e *limitError) Error() string { return e.msg }

func newBudget(ctx context.Context, l Limits) *budget {
	b := &budget{limits: l.withDefaults(), ctx: ctx}
	b.deadline.Store(time.Now().Add(b.limits.Timeout).UnixNano())
	return b
}

// fail records msg as the render's violation unless one is recorded already,
// and returns the recorded one.
func (b *budget) fail(msg string) *limitError {
	b.failed.CompareAndSwap(nil, &limitError{msg: msg})
	return b.failed.Load()
}

// timeUp fails the render because its time ran out.
func (b *budget) timeUp() *limitError {
	b.failed.CompareAndSwap(nil, &limitError{msg: b.limits.timedOut(), timeout: true})
	return b.failed.Load()
}

// violation returns the limit the render went over, or nil.
func (b *budget) violation() *limitError { return b.failed.Load() }

// extend moves the deadline on by d (time the render waited on something that
// is not rendering).
func (b *budget) extend(d time.Duration) { b.deadline.Add(int64(d)) }

func (b *budget) remainingTime() time.Duration {
	return time.Until(time.Unix(0, b.deadline.Load()))
}

// check fails once the caller's context has ended, the time is up or a limit
// was gone over. It is cheap enough to call on every step, write and function
// call: it reads the clock on one call in 16.
func (b *budget) check() error {
	if err := b.ctx.Err(); err != nil {
		return err
	}
	if v := b.failed.Load(); v != nil {
		return v
	}
	if b.checks.Add(1)%16 == 0 && time.Now().UnixNano() > b.deadline.Load() {
		return b.timeUp()
	}
	return nil
}

// step counts one range iteration or template execution, and charges text,
// the bytes of literal text it may write, to the output when the output is
// estimated (Helm).
func (b *budget) step(text int) error {
	if b.steps.Add(1) > int64(b.limits.MaxSteps) {
		return b.fail(b.limits.stepsExceeded())
	}
	if text > 0 {
		if err := b.charge(text); err != nil {
			return err
		}
	}
	return b.check()
}

// charge counts n bytes of output.
func (b *budget) charge(n int) error {
	if b.output.Add(int64(n)) > int64(b.limits.MaxOutputBytes) {
		return b.fail(b.limits.outputExceeded())
	}
	return nil
}

// outputLeft is how many bytes of output the render may still write.
func (b *budget) outputLeft() int {
	return b.limits.MaxOutputBytes - int(b.output.Load())
}

// limitedWriter is what Go templates execute into: it fails the execution
// once the render's output is over MaxOutputBytes or its time is up, so a
// loop that writes stops at its next write.
type limitedWriter struct {
	b   *budget
	buf bytes.Buffer
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if err := w.b.check(); err != nil {
		return 0, err
	}
	if err := w.b.charge(len(p)); err != nil {
		return 0, err
	}
	return w.buf.Write(p)
}

// run calls f on a goroutine of its own and waits until it returns, the
// render's time is up or the caller's context ends. It is for work that cannot
// be interrupted from outside (Helm's install action, a Kustomize build). When
// run gives up, f goes on in the background: instrumented templates stop at
// their next step, function call or write because every check then fails, but
// work that makes no such call (Kustomize, Helm's own processing of the
// chart) runs to its end. A panic in f is returned as an error.
func (b *budget) run(f func()) error {
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	timer := time.NewTimer(b.remainingTime())
	defer timer.Stop()
	select {
	case r := <-done:
		if r != nil {
			return fmt.Errorf("panic: %v", r)
		}
		return nil
	case <-timer.C:
		return b.timeUp()
	case <-b.ctx.Done():
		return b.ctx.Err()
	}
}

// limitExceeded makes the *Error of a limit gone over in object; where, if
// not empty, says where in the template it happened ("line 3").
func limitExceeded(object, where string, v *limitError) *Error {
	msg := v.msg
	if where != "" {
		msg = "stopped at " + where + ": " + msg
	}
	reason := ReasonRenderLimitExceeded
	if v.timeout {
		reason = ReasonRenderTimedOut
	}
	return newError(reason, object, msg, v)
}

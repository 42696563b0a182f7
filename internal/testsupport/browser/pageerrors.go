package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/runtime"
)

// pageErrorsKey finds a browser's pageErrors in its context.
type pageErrorsKey struct{}

// pageErrors collects the uncaught exceptions (unhandled promise rejections included) and the
// console.error calls of a browser's pages. record runs on chromedp's reading goroutine, so it
// only appends under a lock.
type pageErrors struct {
	mu   sync.Mutex
	msgs []string
}

// record is chromedp's listener: it keeps the events that are page errors.
func (p *pageErrors) record(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		msg = exceptionText(ev.ExceptionDetails)
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError {
			return
		}
		msg = "console.error: " + argsText(ev.Args) + stackPlace(ev.StackTrace)
	default:
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, msg)
}

// all returns the errors recorded so far.
func (p *pageErrors) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.msgs...)
}

// report fails t with every recorded error.
func (p *pageErrors) report(t testing.TB) {
	t.Helper()
	if msgs := p.all(); len(msgs) > 0 {
		t.Errorf("the browser's pages reported %d error(s); the UI's pages must not throw:\n%s",
			len(msgs), strings.Join(msgs, "\n"))
	}
}

// errorsOf returns the pageErrors of a context from New.
func errorsOf(ctx context.Context) *pageErrors {
	p, _ := ctx.Value(pageErrorsKey{}).(*pageErrors)
	return p
}

// exceptionText is the exception as the DevTools console shows it ("Uncaught Error: boom"), and
// where it was thrown.
func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "exception"
	}
	text := d.Text
	if d.Exception != nil {
		// An Error's description is its message followed by its stack.
		desc, _, _ := strings.Cut(valueText(d.Exception), "\n")
		text += " " + desc
	}
	if d.URL != "" {
		return fmt.Sprintf("%s (%s:%d:%d)", text, d.URL, d.LineNumber+1, d.ColumnNumber+1)
	}
	return text + stackPlace(d.StackTrace)
}

// argsText joins the arguments of a console call.
func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		parts = append(parts, valueText(a))
	}
	return strings.Join(parts, " ")
}

// valueText is a string as it is, and any other value as the protocol describes it.
func valueText(o *runtime.RemoteObject) string {
	if o.Type == runtime.RemoteObjectTypeString {
		var s string
		if json.Unmarshal(o.Value, &s) == nil {
			return s
		}
	}
	switch {
	case o.Description != "":
		return o.Description
	case o.UnserializableValue != "":
		return string(o.UnserializableValue)
	case len(o.Value) > 0:
		return string(o.Value)
	}
	return string(o.Type)
}

// stackPlace is where the stack's top frame is, or nothing.
func stackPlace(st *runtime.StackTrace) string {
	if st == nil || len(st.CallFrames) == 0 {
		return ""
	}
	f := st.CallFrames[0]
	return fmt.Sprintf(" (%s:%d:%d)", f.URL, f.LineNumber+1, f.ColumnNumber+1)
}

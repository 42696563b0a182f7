package render

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/sprig/v3"
)

func TestBudget(t *testing.T) {
	t.Run("steps", func(t *testing.T) {
		b := newBudget(context.Background(), Limits{MaxSteps: 3})
		for i := 0; i < 3; i++ {
			if err := b.step(0); err != nil {
				t.Fatalf("step %d: %v", i+1, err)
			}
		}
		if err := b.step(0); err == nil || !strings.Contains(err.Error(), "more than 3 loop iterations") {
			t.Errorf("fourth step: %v", err)
		}
	})
	t.Run("output charged by steps and writes", func(t *testing.T) {
		b := newBudget(context.Background(), Limits{MaxOutputBytes: 10})
		if err := b.step(6); err != nil {
			t.Fatal(err)
		}
		w := &limitedWriter{b: b}
		if _, err := w.Write([]byte("abcd")); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte("e")); err == nil || !strings.Contains(err.Error(), "wrote more than 10 bytes") {
			t.Errorf("write over the limit: %v", err)
		}
	})
	t.Run("first violation sticks", func(t *testing.T) {
		b := newBudget(context.Background(), Limits{})
		first := b.fail("first")
		b.fail("second")
		if err := b.check(); err != first || b.violation() != first {
			t.Errorf("check = %v, violation = %v, want the first", err, b.violation())
		}
	})
	t.Run("deadline", func(t *testing.T) {
		b := newBudget(context.Background(), Limits{Timeout: time.Millisecond})
		time.Sleep(5 * time.Millisecond)
		var err error
		for i := 0; i < 16 && err == nil; i++ { // the clock is read on one check in 16
			err = b.check()
		}
		if err == nil || !strings.Contains(err.Error(), "longer than 1ms") {
			t.Errorf("check after the deadline: %v", err)
		}
	})
	t.Run("extend", func(t *testing.T) {
		b := newBudget(context.Background(), Limits{Timeout: time.Second})
		b.extend(time.Hour)
		if d := b.remainingTime(); d < time.Hour {
			t.Errorf("remaining = %v after extending by an hour", d)
		}
	})
	t.Run("cancelled context is not a violation", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		b := newBudget(ctx, Limits{})
		if err := b.check(); !errors.Is(err, context.Canceled) || b.violation() != nil {
			t.Errorf("check = %v, violation = %v", err, b.violation())
		}
	})
	t.Run("run gives up at the deadline", func(t *testing.T) {
		b := newBudget(context.Background(), Limits{Timeout: 50 * time.Millisecond})
		release := make(chan struct{})
		defer close(release)
		err := b.run(func() { <-release })
		var le *limitError
		if !errors.As(err, &le) || !strings.Contains(le.msg, "longer than 50ms") {
			t.Errorf("run = %v, want the timeout", err)
		}
	})
	t.Run("run returns a panic", func(t *testing.T) {
		b := newBudget(context.Background(), Limits{})
		if err := b.run(func() { panic("boom") }); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Errorf("run = %v", err)
		}
	})
}

func TestSizeOf(t *testing.T) {
	s := strings.Repeat("x", 1000)
	shared := []any{s, s, s, s}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	tests := []struct {
		name     string
		v        any
		min, max int
	}{
		{"string", "abc", 3, 10},
		{"shared string counts each time", []any{shared, shared}, 8000, 8100},
		{"map", map[string]any{"k": "v", "n": 1}, 26, 60},
		{"bytes", []byte("abcd"), 16, 20},
		{"cycle stops at the limit", cyclic, 1001, 1 << 20},
	}
	for _, tt := range tests {
		if n := sizeOf(reflect.ValueOf(tt.v), 1000); tt.name == "cycle stops at the limit" {
			if n <= 1000 {
				t.Errorf("%s: %d, want over the limit", tt.name, n)
			}
		} else if n := sizeOf(reflect.ValueOf(tt.v), 1<<20); n < tt.min || n > tt.max {
			t.Errorf("%s: sizeOf = %d, want %d..%d", tt.name, n, tt.min, tt.max)
		}
	}
}

func TestPrintfPadding(t *testing.T) {
	tests := []struct {
		format string
		want   int
	}{
		{"%s-%d", 0},
		{"%5d|%-10s|%.3f", 18},
		{"%[2]*[1]d", 1_000_000 + 2 + 1},
		{"%0100000000d", 1_000_000},
		{"100%%", 0},
	}
	for _, tt := range tests {
		if got := printfPadding(tt.format); got != tt.want {
			t.Errorf("printfPadding(%q) = %d, want %d", tt.format, got, tt.want)
		}
	}
}

// TestCappedFuncsMatchSprig: under the caps, the replaced functions return
// what sprig's do.
func TestCappedFuncsMatchSprig(t *testing.T) {
	capped := newBudget(context.Background(), Limits{}).helmFuncs()
	orig := sprig.TxtFuncMap()
	orig["printf"] = fmt.Sprintf
	calls := []struct {
		fn   string
		args []any
	}{
		{"until", []any{5}}, {"until", []any{-3}}, {"until", []any{0}},
		{"untilStep", []any{0, 10, 3}}, {"untilStep", []any{10, 0, -4}}, {"untilStep", []any{0, 10, -1}}, {"untilStep", []any{3, 3, 1}},
		{"seq", []any{5}}, {"seq", []any{-2}}, {"seq", []any{2, 6}}, {"seq", []any{6, 2}}, {"seq", []any{0, 3, 12}}, {"seq", []any{12, -3, 0}},
		{"seq", []any{1, 2, 3, 4}}, {"seq", []any{}},
		{"repeat", []any{3, "ab"}}, {"repeat", []any{0, "ab"}},
		{"indent", []any{2, "a\nb"}}, {"nindent", []any{4, "a\nb\n"}},
		{"replace", []any{"a", "xyz", "banana"}}, {"replace", []any{"", "-", "abc"}},
		{"regexReplaceAll", []any{"a(n)", "banana", "<${1}>"}}, {"regexReplaceAllLiteral", []any{"a(n)", "banana", "<${1}>"}},
		{"regexSplit", []any{"a", "banana", -1}}, {"regexFindAll", []any{"a.", "banana", -1}},
		{"join", []any{", ", []any{"a", 1, true}}}, {"splitList", []any{",", "a,b,,c"}}, {"split", []any{",", "a,b"}}, {"splitn", []any{",", 2, "a,b,c"}},
		{"wrapWith", []any{3, "|", "abc def ghi"}}, {"uniq", []any{[]any{1, 2, 1}}}, {"without", []any{[]any{1, 2, 3}, 2}},
		{"cat", []any{"a", 1, nil}}, {"toPrettyJson", []any{map[string]any{"a": []any{1}}}}, {"printf", []any{"%05d|%s", 42, "x"}},
		{"randAlphaNum", []any{0}},
	}
	for _, c := range calls {
		got, gerr := call(capped[c.fn], c.args)
		want, werr := call(orig[c.fn], c.args)
		if (gerr != nil) != (werr != nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s%v = %#v, %v; sprig: %#v, %v", c.fn, c.args, got, gerr, want, werr)
		}
	}
}

// call calls a template function as text/template would, with a panic as an
// error.
func call(fn any, args []any) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("panic")
		}
	}()
	v := reflect.ValueOf(fn)
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		if a == nil {
			in[i] = reflect.Zero(reflect.TypeFor[any]())
		} else {
			in[i] = reflect.ValueOf(a)
		}
	}
	out := v.Call(in)
	if len(out) == 2 && !out[1].IsNil() {
		return nil, out[1].Interface().(error)
	}
	return out[0].Interface(), nil
}

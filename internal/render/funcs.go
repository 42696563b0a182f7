package render

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/Masterminds/sprig/v3"
)

// Template functions under the budget.
//
// Every function a template can call is wrapped (limitFuncs): the wrapper
// checks the render's time, refuses serialising an argument that would print
// larger than maxTransientBytes (a list holding one long string many times is
// small in memory and huge as text), and refuses a result that grew past
// MaxValueBytes or MaxListLength: a string or list longer than any of the
// arguments. That bounds chains such as {{ $s = cat $s $s }} in a loop. The
// functions whose output size is driven by an argument (repeat, indent,
// until, randAlphaNum, replace, printf widths...) are replaced by versions
// that check the size before building anything.

// sizedArgs are the functions whose result is about as large as their
// arguments printed (fmt, JSON, YAML, copies): their arguments are measured
// before the call.
var sizedArgs = map[string]bool{
	"cat": true, "quote": true, "squote": true, "toString": true, "toStrings": true,
	"toJson": true, "toPrettyJson": true, "toRawJson": true, "mustToJson": true,
	"mustToPrettyJson": true, "mustToRawJson": true, "toYaml": true,
	"deepCopy": true, "mustDeepCopy": true, "sortAlpha": true,
	"print": true, "printf": true, "println": true, "html": true, "js": true, "urlquery": true,
}

// helmOwnFuncs are the functions Helm's engine defines itself or overrides.
// They are left to Helm: CustomTemplateFuncs would replace them, losing what
// Helm does (include and tpl see the chart's templates, fail and required
// wrap their message, getHostByName is disabled).
var helmOwnFuncs = []string{
	"toToml", "mustToToml", "fromToml", "toYaml", "mustToYaml", "toYamlPretty",
	"fromYaml", "fromYamlArray", "toJson", "mustToJson", "fromJson", "fromJsonArray",
	"include", "tpl", "required", "fail", "lookup", "getHostByName", "env", "expandenv",
}

// goFuncs returns the functions of Go templates (values and manifests),
// built once per render.
func (b *budget) goFuncs() template.FuncMap {
	b.goOnce.Do(func() {
		f := b.limitFuncs(funcMap())
		f[stepFunc] = func(int) (string, error) { return "", b.step(0) }
		f[printFunc] = b.printCheck(false)
		b.goMap = f
	})
	return b.goMap
}

// helmFuncs returns the functions given to Helm's engine as
// CustomTemplateFuncs: sprig's, as Helm has them, under the budget, plus the
// functions the instrumentation calls. Helm estimates its output: a step
// charges the literal text of its body and a print what it prints.
func (b *budget) helmFuncs() template.FuncMap {
	b.helmOnce.Do(func() {
		base := sprig.TxtFuncMap()
		for _, name := range helmOwnFuncs {
			delete(base, name)
		}
		f := b.limitFuncs(base)
		f[stepFunc] = func(text int) (string, error) { return "", b.step(text) }
		f[printFunc] = b.printCheck(true)
		f[sizedFunc] = func(fn string, v any) (any, error) {
			if sizeOf(reflect.ValueOf(v), maxTransientBytes) > maxTransientBytes {
				return nil, b.fail(valueTooLarge(fn))
			}
			return v, b.check()
		}
		f[tplFunc] = func(text string) (string, error) {
			if err := b.check(); err != nil {
				return "", err
			}
			out, err := prepareHelm("tpl", text)
			if err != nil {
				return "", b.fail("the render limits cannot be applied to a template given to tpl; simplify that template")
			}
			return out, nil
		}
		b.helmMap = f
	})
	return b.helmMap
}

// limitFuncs replaces the size-driven functions of base by capped ones, adds
// capped versions of text/template's printing built-ins, and wraps every
// function. base is modified.
func (b *budget) limitFuncs(base template.FuncMap) template.FuncMap {
	b.capFuncs(base)
	base["print"] = fmt.Sprint
	base["println"] = fmt.Sprintln
	base["printf"] = func(format string, args ...any) (string, error) {
		if printfPadding(format) > maxTransientBytes {
			return "", b.fail(valueTooLarge("printf"))
		}
		return fmt.Sprintf(format, args...), nil
	}
	base["html"] = template.HTMLEscaper
	base["js"] = template.JSEscaper
	base["urlquery"] = template.URLQueryEscaper
	out := make(template.FuncMap, len(base)+4)
	for name, fn := range base {
		out[name] = b.wrap(name, fn)
	}
	return out
}

// capFuncs replaces, in f, the functions whose result size an argument
// decides by versions that check the size first.
func (b *budget) capFuncs(f template.FuncMap) {
	b.capTextFuncs(f)
	b.capRangeFuncs(f)
	b.capRegexFuncs(f)
	b.capListFuncs(f)
}

// capTextFuncs caps the functions that make a string longer than their
// arguments: repetition, indentation, random strings, wrapping, replacing,
// joining.
func (b *budget) capTextFuncs(f template.FuncMap) {
	if orig, ok := f["repeat"].(func(int, string) string); ok {
		f["repeat"] = func(count int, s string) (string, error) {
			if count > 0 && len(s) > 0 && count > MaxValueBytes/len(s) {
				return "", b.fail(valueTooLarge("repeat"))
			}
			return orig(count, s), nil
		}
	}
	for _, name := range []string{"indent", "nindent"} {
		if orig, ok := f[name].(func(int, string) string); ok {
			f[name] = func(spaces int, s string) (string, error) {
				if spaces > 0 && (spaces > MaxValueBytes || len(s)+(strings.Count(s, "\n")+1)*spaces > MaxValueBytes) {
					return "", b.fail(valueTooLarge(name))
				}
				return orig(spaces, s), nil
			}
		}
	}
	for _, name := range []string{"randAlphaNum", "randAlpha", "randAscii", "randNumeric"} {
		if orig, ok := f[name].(func(int) string); ok {
			f[name] = func(count int) (string, error) {
				if count > MaxValueBytes {
					return "", b.fail(valueTooLarge(name))
				}
				return orig(count), nil
			}
		}
	}
	if orig, ok := f["randBytes"].(func(int) (string, error)); ok {
		f["randBytes"] = func(count int) (string, error) {
			if count > MaxValueBytes/4*3 {
				return "", b.fail(valueTooLarge("randBytes"))
			}
			return orig(count)
		}
	}
	if orig, ok := f["wrapWith"].(func(int, string, string) string); ok {
		f["wrapWith"] = func(width int, sep, s string) (string, error) {
			if len(sep) > 0 && (len(s)+1 > maxTransientBytes/len(sep) || len(s)+(len(s)+1)*len(sep) > maxTransientBytes) {
				return "", b.fail(valueTooLarge("wrapWith"))
			}
			return orig(width, sep, s), nil
		}
	}
	if orig, ok := f["replace"].(func(string, string, string) string); ok {
		f["replace"] = func(old, repl, src string) (string, error) {
			if len(repl) > len(old) {
				n := strings.Count(src, old)
				if len(src)+n*(len(repl)-len(old)) > MaxValueBytes {
					return "", b.fail(valueTooLarge("replace"))
				}
			}
			return orig(old, repl, src), nil
		}
	}
	if orig, ok := f["join"].(func(string, any) string); ok {
		f["join"] = func(sep string, v any) (string, error) {
			rv := reflect.ValueOf(v)
			n := 1
			if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
				n = rv.Len()
			}
			if n > 0 && len(sep) > maxTransientBytes/n || sizeOf(rv, maxTransientBytes)+n*len(sep) > maxTransientBytes {
				return "", b.fail(valueTooLarge("join"))
			}
			return orig(sep, v), nil
		}
	}
}

// capRangeFuncs caps the functions that make a list of numbers.
func (b *budget) capRangeFuncs(f template.FuncMap) {
	if _, ok := f["until"]; ok {
		f["until"] = func(count int) ([]int, error) {
			step := 1
			if count < 0 {
				step = -1
			}
			return b.untilStep("until", 0, count, step)
		}
	}
	if _, ok := f["untilStep"]; ok {
		f["untilStep"] = func(start, stop, step int) ([]int, error) { return b.untilStep("untilStep", start, stop, step) }
	}
	if _, ok := f["seq"]; ok {
		f["seq"] = b.seq
	}
}

// capRegexFuncs caps the regular expression functions whose work or result
// grows with the matches.
func (b *budget) capRegexFuncs(f template.FuncMap) {
	for _, name := range []string{"regexReplaceAll", "regexReplaceAllLiteral"} {
		literal := name == "regexReplaceAllLiteral"
		if orig, ok := f[name].(func(string, string, string) string); ok {
			f[name] = func(regex, s, repl string) (string, error) {
				if err := b.regexReplaceBound(name, regex, s, repl, literal); err != nil {
					return "", err
				}
				return orig(regex, s, repl), nil
			}
		}
		must := "must" + strings.ToUpper(name[:1]) + name[1:]
		if orig, ok := f[must].(func(string, string, string) (string, error)); ok {
			f[must] = func(regex, s, repl string) (string, error) {
				if err := b.regexReplaceBound(must, regex, s, repl, literal); err != nil {
					return "", err
				}
				return orig(regex, s, repl)
			}
		}
	}
	for _, name := range []string{"regexSplit", "regexFindAll"} {
		if orig, ok := f[name].(func(string, string, int) []string); ok {
			f[name] = func(regex, s string, n int) ([]string, error) {
				if err := b.regexCountBound(name, regex, s, n); err != nil {
					return nil, err
				}
				return orig(regex, s, n), nil
			}
		}
		must := "must" + strings.ToUpper(name[:1]) + name[1:]
		if orig, ok := f[must].(func(string, string, int) ([]string, error)); ok {
			f[must] = func(regex, s string, n int) ([]string, error) {
				if err := b.regexCountBound(must, regex, s, n); err != nil {
					return nil, err
				}
				return orig(regex, s, n)
			}
		}
	}
}

// capListFuncs caps the functions that split a string into a list, and those
// that compare every element of a list with every other.
func (b *budget) capListFuncs(f template.FuncMap) {
	if orig, ok := f["splitList"].(func(string, string) []string); ok {
		f["splitList"] = func(sep, s string) ([]string, error) {
			if pieces(sep, s) > MaxListLength {
				return nil, b.fail(listTooLong("splitList"))
			}
			return orig(sep, s), nil
		}
	}
	if orig, ok := f["split"].(func(string, string) map[string]string); ok {
		f["split"] = func(sep, s string) (map[string]string, error) {
			if pieces(sep, s) > MaxListLength {
				return nil, b.fail(listTooLong("split"))
			}
			return orig(sep, s), nil
		}
	}
	if orig, ok := f["splitn"].(func(string, int, string) map[string]string); ok {
		f["splitn"] = func(sep string, n int, s string) (map[string]string, error) {
			if (n < 0 || n > MaxListLength) && pieces(sep, s) > MaxListLength {
				return nil, b.fail(listTooLong("splitn"))
			}
			return orig(sep, n, s), nil
		}
	}
	// uniq and without compare every element with every other.
	for _, name := range []string{"uniq", "mustUniq"} {
		if orig, ok := f[name].(func(any) []any); ok {
			f[name] = func(list any) ([]any, error) {
				if listLen(list) > MaxListLength {
					return nil, b.fail(fmt.Sprintf("%s takes lists of at most %d elements; give it a shorter list", name, MaxListLength))
				}
				return orig(list), nil
			}
		} else if orig, ok := f[name].(func(any) ([]any, error)); ok {
			f[name] = func(list any) ([]any, error) {
				if listLen(list) > MaxListLength {
					return nil, b.fail(fmt.Sprintf("%s takes lists of at most %d elements; give it a shorter list", name, MaxListLength))
				}
				return orig(list)
			}
		}
	}
	for _, name := range []string{"without", "mustWithout"} {
		if orig, ok := f[name].(func(any, ...any) []any); ok {
			f[name] = func(list any, omit ...any) ([]any, error) {
				if listLen(list) > MaxListLength {
					return nil, b.fail(fmt.Sprintf("%s takes lists of at most %d elements; give it a shorter list", name, MaxListLength))
				}
				return orig(list, omit...), nil
			}
		} else if orig, ok := f[name].(func(any, ...any) ([]any, error)); ok {
			f[name] = func(list any, omit ...any) ([]any, error) {
				if listLen(list) > MaxListLength {
					return nil, b.fail(fmt.Sprintf("%s takes lists of at most %d elements; give it a shorter list", name, MaxListLength))
				}
				return orig(list, omit...)
			}
		}
	}
}

// untilStep is sprig's untilStep with a cap on the length, and without its
// endless loop when start+step overflows.
func (b *budget) untilStep(name string, start, stop, step int) ([]int, error) {
	var n uint64
	switch {
	case stop > start && step > 0:
		d := uint64(stop) - uint64(start)
		n = d / uint64(step)
		if d%uint64(step) != 0 {
			n++
		}
	case stop < start && step < 0:
		d := uint64(start) - uint64(stop)
		s := uint64(-(step + 1)) + 1
		n = d / s
		if d%s != 0 {
			n++
		}
	}
	if n > MaxListLength {
		return nil, b.fail(listTooLong(name))
	}
	v := make([]int, n)
	for i := range v {
		v[i] = start + i*step
	}
	return v, nil
}

// seq is sprig's seq over the capped untilStep.
func (b *budget) seq(params ...int) (string, error) {
	var start, stop, step int
	switch len(params) {
	case 1:
		start, stop, step = 1, params[0], 1
		if stop < start {
			step = -1
		}
		stop += step
	case 2:
		start, stop, step = params[0], params[1], 1
		if stop < start {
			step = -1
		}
		stop += step
	case 3:
		start, stop, step = params[0], params[2], params[1]
		inc := 1
		if stop < start {
			inc = -1
			if step > 0 {
				return "", nil
			}
		}
		stop += inc
	default:
		return "", nil
	}
	v, err := b.untilStep("seq", start, stop, step)
	if err != nil {
		return "", err
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " "), nil
}

// regexReplaceBound refuses a replacement whose result could grow past
// maxTransientBytes: each match adds repl, and each $ reference in repl at
// most the match it refers to.
func (b *budget) regexReplaceBound(name, regex, s, repl string, literal bool) error {
	if len(repl) == 0 {
		return nil
	}
	re, err := regexp.Compile(regex)
	if err != nil {
		return nil // the function itself reports it
	}
	limit := maxTransientBytes/len(repl) + 1
	n := len(re.FindAllStringIndex(s, limit))
	bound := len(s) + n*len(repl)
	if !literal {
		bound += strings.Count(repl, "$") * len(s)
	}
	if n >= limit || bound > maxTransientBytes {
		return b.fail(valueTooLarge(name))
	}
	return nil
}

// regexCountBound refuses a split or find-all that would return more than
// MaxListLength strings.
func (b *budget) regexCountBound(name, regex, s string, n int) error {
	if n >= 0 && n <= MaxListLength {
		return nil
	}
	re, err := regexp.Compile(regex)
	if err != nil {
		return nil
	}
	if len(re.FindAllStringIndex(s, MaxListLength+1)) > MaxListLength-1 {
		return b.fail(listTooLong(name))
	}
	return nil
}

// pieces is how many strings strings.Split(s, sep) returns.
func pieces(sep, s string) int {
	if sep == "" {
		return utf8.RuneCountInString(s)
	}
	return strings.Count(s, sep) + 1
}

func listLen(v any) int {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return rv.Len()
	}
	return 0
}

// printfPadding sums the widths and precisions of a printf format: the bytes
// of padding and digits it may add whatever its arguments. fmt refuses
// numbers over 10^6, which is also what a '*' may ask for.
func printfPadding(format string) int {
	const fmtMax = 1_000_000
	total := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
	spec:
		for i++; i < len(format); i++ {
			switch c := format[i]; {
			case c >= '0' && c <= '9':
				j := i
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				n := fmtMax
				if j-i <= 7 {
					n, _ = strconv.Atoi(format[i:j])
					n = min(n, fmtMax)
				}
				total += n
				i = j - 1
			case c == '*':
				total += fmtMax
			case strings.IndexByte("+-# .[]", c) >= 0:
			default:
				break spec
			}
		}
	}
	return total
}

// wrap puts fn under the budget: see the comment at the top of the file.
// Errors go back as the function's error when it has one, as a panic
// otherwise (text/template turns it into the call's error).
func (b *budget) wrap(name string, fn any) any {
	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func || t.NumOut() == 0 {
		return fn
	}
	sized := sizedArgs[name]
	withErr := t.NumOut() == 2 && t.Out(1) == errorType
	abort := func(err error) []reflect.Value {
		if !withErr {
			panic(err)
		}
		return []reflect.Value{reflect.Zero(t.Out(0)), reflect.ValueOf(&err).Elem()}
	}
	return reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
		if err := b.check(); err != nil {
			return abort(err)
		}
		if sized {
			n := 0
			for _, a := range args {
				n += sizeOf(a, maxTransientBytes-n)
				if n > maxTransientBytes {
					return abort(b.fail(valueTooLarge(name)))
				}
			}
		}
		var out []reflect.Value
		if t.IsVariadic() {
			out = v.CallSlice(args)
		} else {
			out = v.Call(args)
		}
		if withErr && !out[1].IsNil() {
			return out
		}
		if msg := grown(name, out[0], args); msg != "" {
			return abort(b.fail(msg))
		}
		return out
	}).Interface()
}

var errorType = reflect.TypeFor[error]()

// grown returns why result is refused: a string over MaxValueBytes or a list
// over MaxListLength that is longer than every argument (a function that
// returns one of its arguments, or part of one, is not refused for its
// input's size).
func grown(name string, result reflect.Value, args []reflect.Value) string {
	r := indirectValue(result)
	if !r.IsValid() {
		return ""
	}
	switch r.Kind() {
	case reflect.String:
		if r.Len() > MaxValueBytes && r.Len() > longestArg(args, true) {
			return valueTooLarge(name)
		}
	case reflect.Slice, reflect.Array, reflect.Map:
		if r.Len() > MaxListLength && r.Len() > longestArg(args, false) {
			return listTooLong(name)
		}
	}
	return ""
}

// longestArg is the length of the longest string (strings true) or list or
// map argument, variadic arguments included.
func longestArg(args []reflect.Value, text bool) int {
	longest := 0
	var visit func(v reflect.Value, top bool)
	visit = func(v reflect.Value, top bool) {
		v = indirectValue(v)
		if !v.IsValid() {
			return
		}
		switch k := v.Kind(); {
		case k == reflect.String && text:
			longest = max(longest, v.Len())
		case (k == reflect.Slice || k == reflect.Array) && v.Type().Elem().Kind() == reflect.Uint8:
			longest = max(longest, v.Len())
		case k == reflect.Slice || k == reflect.Array || k == reflect.Map:
			if !text {
				longest = max(longest, v.Len())
			}
			if top && k == reflect.Slice { // variadic arguments
				for i := 0; i < v.Len(); i++ {
					visit(v.Index(i), false)
				}
			}
		}
	}
	for _, a := range args {
		visit(a, true)
	}
	return longest
}

func indirectValue(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

// sizeOf estimates the bytes v takes once printed or serialised (text, keys,
// punctuation, indentation), stopping as soon as the estimate passes limit;
// it then returns a number over limit. A value reached twice counts twice, as
// printing it does; the cut-off also ends cycles.
func sizeOf(v reflect.Value, limit int) int {
	s := sizer{limit: limit}
	s.add(v, 0)
	return s.n
}

type sizer struct{ n, limit int }

func (s *sizer) add(v reflect.Value, depth int) {
	s.n += 2 + 2*depth // separators, and indentation when pretty-printed
	v = indirectValue(v)
	if s.n > s.limit || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		s.n += v.Len()
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			s.n += 4 * v.Len() // fmt prints a byte as up to 4 characters
			return
		}
		for i := 0; i < v.Len() && s.n <= s.limit; i++ {
			s.add(v.Index(i), depth+1)
		}
	case reflect.Map:
		it := v.MapRange()
		for s.n <= s.limit && it.Next() {
			s.add(it.Key(), depth+1)
			s.add(it.Value(), depth+1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField() && s.n <= s.limit; i++ {
			s.add(v.Field(i), depth+1)
		}
	default:
		s.n += 24
	}
}

var stringerType = reflect.TypeFor[fmt.Stringer]()

// printCheck returns the function the instrumentation appends to printing
// actions. It refuses a value whose text would not fit in the output left;
// with estimate (Helm, whose writer Holdfast does not see) it also charges
// that text to the output. It returns the value to print.
func (b *budget) printCheck(estimate bool) func(any) (any, error) {
	return func(v any) (any, error) {
		if err := b.check(); err != nil {
			return nil, err
		}
		var n int
		switch x := v.(type) {
		case nil:
			n = len("<no value>")
		case string:
			n = len(x)
		case bool, int, int64, float64:
			n = 24
		default:
			left := b.outputLeft()
			if n = sizeOf(reflect.ValueOf(v), left); n > left {
				return nil, b.fail(b.limits.outputExceeded())
			}
			v = printable(v)
		}
		if estimate {
			if err := b.charge(n); err != nil {
				return nil, err
			}
		}
		return v, nil
	}
}

// printable keeps a value printed as text/template prints it. text/template
// uses the String or Error method of *T for an addressable T (a struct field
// such as Helm's .Capabilities.KubeVersion); passed through a function, the
// value is a copy that is not addressable, so it gets a pointer to the copy.
func printable(v any) any {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		return v
	}
	t := rv.Type()
	if t.Implements(errorType) || t.Implements(stringerType) {
		return v
	}
	if pt := reflect.PointerTo(t); pt.Implements(errorType) || pt.Implements(stringerType) {
		p := reflect.New(t)
		p.Elem().Set(rv)
		return p.Interface()
	}
	return v
}

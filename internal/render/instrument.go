package render

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/template/parse"
	"unicode"
	"unicode/utf8"
)

// Template instrumentation.
//
// text/template has no budget of its own: a range over a number or a list
// runs to its end whether or not it writes anything, and a template that
// calls itself twice doubles its work at every level. Capping functions is
// not enough either: three nested ranges over one 10,000-element list run
// 10^12 times without calling any function. So before a template is parsed,
// its text is rewritten so that the budget is consulted where work repeats:
//
//   - a step at the start of the text and of every range, define and block
//     body: {{_holdfastStep N}}, where N is the length of the literal text
//     directly in that body (what one iteration or call may write);
//   - a print check at the end of every action that prints:
//     {{ .x }} becomes {{ .x | _holdfastPrint }}, so that printing a large
//     value (a list holding one long string 10,000 times) is refused before
//     fmt builds it in memory;
//   - for Helm, whose own functions cannot be replaced: the template argument
//     of tpl is instrumented too (tpl (_holdfastTpl X) Y), and the argument of
//     Helm's serialisers is checked for size (toYaml (_holdfastSized "toYaml" X)).
//
// The rewrite inserts text only, never a line break, so line numbers in error
// messages stay those of the user's text (columns after an insertion on the
// same line shift). It keeps whitespace trimming: a step after a "-}}" is
// written "{{- ... -}}" so that it trims what the original trimmed. The
// result is then parsed and every tree checked for the insertions
// (checkInstrumented); a template the rewrite did not fully instrument is
// refused, never executed unbounded.

const (
	stepFunc  = "_holdfastStep"
	printFunc = "_holdfastPrint"
	sizedFunc = "_holdfastSized"
	tplFunc   = "_holdfastTpl"
)

// helmSerializers are the functions of Helm's engine that turn a value into
// text. Helm does not export them, so they cannot be wrapped like sprig's;
// their argument goes through _holdfastSized instead.
var helmSerializers = map[string]bool{
	"toYaml": true, "mustToYaml": true, "toYamlPretty": true,
	"toJson": true, "mustToJson": true, "toToml": true, "mustToToml": true,
}

var keywords = map[string]bool{
	"block": true, "break": true, "continue": true, "define": true, "else": true,
	"end": true, "if": true, "range": true, "template": true, "with": true,
}

// errNotInstrumented: the rewrite does not understand the text. The caller
// parses the original to tell a template error (reported as such, nothing
// runs) from a gap in the rewrite (refused).
var errNotInstrumented = errors.New("template text not understood")

type tokKind uint8

const (
	tokIdent tokKind = iota
	tokField
	tokVar
	tokDot
	tokString
	tokNumber
	tokLParen
	tokRParen
	tokPipe
	tokDeclare
	tokAssign
	tokChar
)

type token struct {
	kind       tokKind
	start, end int
}

// tmplAction is one {{ ... }} of a template text.
type tmplAction struct {
	start, end           int // the action, delimiters and trim markers included
	innerStart, innerEnd int // what is between them
	rightTrim            bool
	comment              bool
	toks                 []token // spaces left out
}

func (a tmplAction) keyword(text string) string {
	if len(a.toks) == 0 || a.toks[0].kind != tokIdent {
		return ""
	}
	if w := text[a.toks[0].start:a.toks[0].end]; keywords[w] {
		return w
	}
	return ""
}

// declares reports whether a is {{ $x := ... }}, {{ $x = ... }} or
// {{ $i, $x := ... }}: actions that assign rather than print.
func (a tmplAction) declares(text string) bool {
	t := a.toks
	if len(t) >= 2 && t[0].kind == tokVar && (t[1].kind == tokDeclare || t[1].kind == tokAssign) {
		return true
	}
	return len(t) >= 4 && t[0].kind == tokVar && t[1].kind == tokChar && text[t[1].start] == ',' &&
		t[2].kind == tokVar && (t[3].kind == tokDeclare || t[3].kind == tokAssign)
}

type insertion struct {
	at   int
	text string
}

// instrument rewrites text as the package comment above describes. helm adds
// the rewrites of tpl and of Helm's serialisers.
func instrument(text string, helm bool) (string, error) {
	acts, err := scanActions(text)
	if err != nil {
		return "", err
	}

	// Literal text per body: each text run counts for the innermost
	// enclosing range, define or block, or for the file.
	type frame struct {
		action int
		counts bool
	}
	var stack []frame
	bodyText := make(map[int]int)
	fileText := 0
	addText := func(n int) {
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].counts {
				bodyText[stack[i].action] += n
				return
			}
		}
		fileText += n
	}
	prev := 0
	for i, a := range acts {
		addText(a.start - prev)
		prev = a.end
		if a.comment {
			continue
		}
		switch a.keyword(text) {
		case "if", "with":
			stack = append(stack, frame{i, false})
		case "range", "define", "block":
			stack = append(stack, frame{i, true})
		case "end":
			if len(stack) == 0 {
				return "", errNotInstrumented
			}
			stack = stack[:len(stack)-1]
		}
	}
	addText(len(text) - prev)

	ins := []insertion{{0, stepAction(fileText, false)}}
	for i, a := range acts {
		if a.comment {
			continue
		}
		if helm {
			w, err := wrapHelmCalls(text, a)
			if err != nil {
				return "", err
			}
			ins = append(ins, w...)
		}
		switch kw := a.keyword(text); kw {
		case "range", "define", "block":
			ins = append(ins, insertion{a.end, stepAction(bodyText[i], a.rightTrim)})
		case "":
			if !a.declares(text) {
				ins = append(ins, insertion{a.innerEnd, " | " + printFunc})
			}
		}
	}

	sort.SliceStable(ins, func(i, j int) bool { return ins[i].at < ins[j].at })
	var b strings.Builder
	b.Grow(len(text) + 32*len(ins))
	last := 0
	for _, in := range ins {
		b.WriteString(text[last:in.at])
		b.WriteString(in.text)
		last = in.at
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// stepAction is the step call put at the start of a body. After a "-}}" it
// trims as the action before it did.
func stepAction(text int, trim bool) string {
	if trim {
		return "{{- " + stepFunc + " " + strconv.Itoa(text) + " -}}"
	}
	return "{{" + stepFunc + " " + strconv.Itoa(text) + "}}"
}

// wrapHelmCalls wraps the template argument of every tpl call of a in
// _holdfastTpl, and the argument of every Helm serialiser in _holdfastSized,
// whether given after the function name or piped into it.
func wrapHelmCalls(text string, a tmplAction) ([]insertion, error) {
	var ins []insertion
	for k, tk := range a.toks {
		if tk.kind != tokIdent {
			continue
		}
		name := text[tk.start:tk.end]
		var open string
		switch {
		case name == "tpl":
			open = "(" + tplFunc + " "
		case helmSerializers[name]:
			open = "(" + sizedFunc + " " + strconv.Quote(name) + " "
		default:
			continue
		}
		if k+1 < len(a.toks) && operandStart(a.toks[k+1].kind) {
			end, err := operandEnd(a.toks, k+1)
			if err != nil {
				return nil, err
			}
			ins = append(ins, insertion{a.toks[k+1].start, open}, insertion{end, ")"})
			continue
		}
		if name != "tpl" && k > 0 && a.toks[k-1].kind == tokPipe {
			ins = append(ins, insertion{tk.start, sizedFunc + " " + strconv.Quote(name) + " | "})
		}
	}
	return ins, nil
}

func operandStart(k tokKind) bool {
	switch k {
	case tokIdent, tokField, tokVar, tokDot, tokString, tokNumber, tokLParen:
		return true
	}
	return false
}

// operandEnd returns where the operand starting at toks[i] ends: one token or
// a parenthesised group, followed by the fields attached to it ($x.a.b, (f).a).
func operandEnd(toks []token, i int) (int, error) {
	j := i
	if toks[j].kind == tokLParen {
		depth := 0
		for ; j < len(toks); j++ {
			switch toks[j].kind {
			case tokLParen:
				depth++
			case tokRParen:
				depth--
			}
			if depth == 0 {
				break
			}
		}
		if j == len(toks) {
			return 0, errNotInstrumented
		}
	}
	for j+1 < len(toks) && toks[j+1].kind == tokField && toks[j+1].start == toks[j].end {
		j++
	}
	return toks[j].end, nil
}

// scanActions finds the actions of text as text/template's lexer does with
// the default delimiters: an action ends at the first "}}" outside quotes,
// and comments may hold anything.
func scanActions(text string) ([]tmplAction, error) {
	var acts []tmplAction
	for i := 0; ; {
		j := strings.Index(text[i:], "{{")
		if j < 0 {
			return acts, nil
		}
		a := tmplAction{start: i + j}
		p := a.start + 2
		if p+1 < len(text) && text[p] == '-' && isSpaceByte(text[p+1]) {
			p += 2
		}
		if strings.HasPrefix(text[p:], "/*") {
			k := strings.Index(text[p+2:], "*/")
			if k < 0 {
				return nil, errNotInstrumented
			}
			q := p + 2 + k + 2
			end, trim, ok := rightDelimAt(text, q)
			if !ok {
				return nil, errNotInstrumented
			}
			a.comment, a.innerStart, a.innerEnd, a.end, a.rightTrim = true, q, q, end, trim
			acts = append(acts, a)
			i = end
			continue
		}
		a.innerStart = p
		for {
			if end, trim, ok := rightDelimAt(text, p); ok {
				a.innerEnd, a.end, a.rightTrim = p, end, trim
				break
			}
			if p >= len(text) {
				return nil, errNotInstrumented
			}
			if isSpaceByte(text[p]) {
				p++
				continue
			}
			tok, err := lexToken(text, p)
			if err != nil {
				return nil, err
			}
			a.toks = append(a.toks, tok)
			p = tok.end
		}
		acts = append(acts, a)
		i = a.end
	}
}

// rightDelimAt reports whether a right delimiter, " -}}" (any space) or
// "}}", starts at p.
func rightDelimAt(text string, p int) (end int, trim, ok bool) {
	if p+4 <= len(text) && isSpaceByte(text[p]) && text[p+1] == '-' && text[p+2:p+4] == "}}" {
		return p + 4, true, true
	}
	if strings.HasPrefix(text[p:], "}}") {
		return p + 2, false, true
	}
	return 0, false, false
}

// lexToken reads the token that starts at p, which is not a space.
func lexToken(text string, p int) (token, error) {
	c := text[p]
	tok := func(k tokKind, end int) (token, error) { return token{k, p, end}, nil }
	switch {
	case c == '=':
		return tok(tokAssign, p+1)
	case c == ':':
		if p+1 < len(text) && text[p+1] == '=' {
			return tok(tokDeclare, p+2)
		}
		return token{}, errNotInstrumented
	case c == '|':
		return tok(tokPipe, p+1)
	case c == '(':
		return tok(tokLParen, p+1)
	case c == ')':
		return tok(tokRParen, p+1)
	case c == '"' || c == '\'':
		for q := p + 1; q < len(text); q++ {
			switch text[q] {
			case '\\':
				q++
			case '\n':
				return token{}, errNotInstrumented
			case c:
				return tok(tokString, q+1)
			}
		}
		return token{}, errNotInstrumented
	case c == '`':
		k := strings.IndexByte(text[p+1:], '`')
		if k < 0 {
			return token{}, errNotInstrumented
		}
		return tok(tokString, p+1+k+1)
	case c == '$':
		return tok(tokVar, alnumEnd(text, p+1))
	case c == '.' && p+1 < len(text) && text[p+1] >= '0' && text[p+1] <= '9':
		return tok(tokNumber, numberEnd(text, p))
	case c == '.':
		if q := alnumEnd(text, p+1); q > p+1 {
			return tok(tokField, q)
		}
		return tok(tokDot, p+1)
	case c == '+' || c == '-' || (c >= '0' && c <= '9'):
		return tok(tokNumber, numberEnd(text, p))
	}
	if r, n := utf8.DecodeRuneInString(text[p:]); isAlphaNumeric(r) {
		return tok(tokIdent, alnumEnd(text, p))
	} else {
		return tok(tokChar, p+n)
	}
}

func alnumEnd(text string, p int) int {
	for p < len(text) {
		r, n := utf8.DecodeRuneInString(text[p:])
		if !isAlphaNumeric(r) {
			break
		}
		p += n
	}
	return p
}

// numberEnd is loose: it takes what text/template's scanner may take in a
// number (signs, digits, letters for bases and exponents, '.', '_').
func numberEnd(text string, p int) int {
	q := p + 1
	for q < len(text) {
		c := text[q]
		switch {
		case c == '.' || c == '_' || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z'):
			q++
		case (c == '+' || c == '-') && strings.IndexByte("eEpP", text[q-1]) >= 0:
			q++
		default:
			return q
		}
	}
	return q
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isAlphaNumeric(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// checkInstrumented verifies the trees parsed from an instrumented text: each
// starts with a step, so does every range body, every printing action ends
// with a print check, and, for Helm, every tpl and serialiser call has its
// argument wrapped. It does not trust the rewrite: whatever the rewrite
// missed, the template is refused rather than run without a budget.
func checkInstrumented(trees []*parse.Tree, helm bool) error {
	c := checker{helm: helm}
	for _, t := range trees {
		if t == nil || t.Root == nil {
			continue
		}
		if !startsWithStep(t.Root) {
			c.fail(t.Root, "has no step at its start")
		}
		c.list(t.Root)
		if c.err != nil {
			return fmt.Errorf("template %q: %w", t.Name, c.err)
		}
	}
	return nil
}

type checker struct {
	helm bool
	err  error
}

func (c *checker) fail(n parse.Node, what string) {
	if c.err == nil {
		c.err = fmt.Errorf("node at offset %d %s", n.Position(), what)
	}
}

func (c *checker) list(l *parse.ListNode) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		c.node(n)
	}
}

func (c *checker) node(n parse.Node) {
	switch n := n.(type) {
	case *parse.ActionNode:
		if !isCallOf(n.Pipe, stepFunc) && len(n.Pipe.Decl) == 0 {
			if last := n.Pipe.Cmds[len(n.Pipe.Cmds)-1]; !isIdent(last.Args[0], printFunc) {
				c.fail(n, "prints without a print check")
			}
		}
		c.pipe(n.Pipe)
	case *parse.IfNode:
		c.pipe(n.Pipe)
		c.list(n.List)
		c.list(n.ElseList)
	case *parse.WithNode:
		c.pipe(n.Pipe)
		c.list(n.List)
		c.list(n.ElseList)
	case *parse.RangeNode:
		c.pipe(n.Pipe)
		if !startsWithStep(n.List) {
			c.fail(n, "is a range without a step")
		}
		c.list(n.List)
		c.list(n.ElseList)
	case *parse.TemplateNode:
		c.pipe(n.Pipe)
	case *parse.ListNode:
		c.list(n)
	}
}

func (c *checker) pipe(p *parse.PipeNode) {
	if p == nil {
		return
	}
	for i, cmd := range p.Cmds {
		if c.helm && len(cmd.Args) > 0 {
			if id, ok := cmd.Args[0].(*parse.IdentifierNode); ok {
				switch {
				case id.Ident == "tpl" && len(cmd.Args) >= 2:
					if !isWrapped(cmd.Args[1], tplFunc) {
						c.fail(cmd, "calls tpl without instrumenting its template")
					}
				case helmSerializers[id.Ident] && len(cmd.Args) >= 2:
					if !isWrapped(cmd.Args[1], sizedFunc) {
						c.fail(cmd, "calls "+id.Ident+" without a size check")
					}
				case helmSerializers[id.Ident] && i > 0:
					if prev := p.Cmds[i-1]; !isIdent(prev.Args[0], sizedFunc) {
						c.fail(cmd, "pipes into "+id.Ident+" without a size check")
					}
				}
			}
		}
		for _, arg := range cmd.Args {
			switch arg := arg.(type) {
			case *parse.PipeNode:
				c.pipe(arg)
			case *parse.ChainNode:
				if p, ok := arg.Node.(*parse.PipeNode); ok {
					c.pipe(p)
				}
			}
		}
	}
}

func startsWithStep(l *parse.ListNode) bool {
	if l == nil || len(l.Nodes) == 0 {
		return false
	}
	a, ok := l.Nodes[0].(*parse.ActionNode)
	return ok && isCallOf(a.Pipe, stepFunc)
}

// isCallOf reports whether p is a single call of fn.
func isCallOf(p *parse.PipeNode, fn string) bool {
	return p != nil && len(p.Decl) == 0 && len(p.Cmds) == 1 && len(p.Cmds[0].Args) > 0 && isIdent(p.Cmds[0].Args[0], fn)
}

// isWrapped reports whether n is (fn ...).
func isWrapped(n parse.Node, fn string) bool {
	p, ok := n.(*parse.PipeNode)
	return ok && isCallOf(p, fn)
}

func isIdent(n parse.Node, name string) bool {
	id, ok := n.(*parse.IdentifierNode)
	return ok && id.Ident == name
}

// prepareHelm instruments a template text for Helm's engine and checks the
// result. A text that does not parse is returned as it is: Helm parses every
// template before it executes any, so it reports the error and nothing runs.
func prepareHelm(name, text string) (string, error) {
	inst, err := instrument(text, true)
	if err == nil {
		var trees []*parse.Tree
		trees, err = parseTrees(name, inst)
		if err == nil {
			return inst, checkInstrumented(trees, true)
		}
	}
	if _, perr := parseTrees(name, text); perr != nil {
		return text, nil
	}
	return "", fmt.Errorf("template %q: %w", name, err)
}

// parseTrees parses text as text/template does, without checking function
// names, and returns all its trees (the text's and its defines').
func parseTrees(name, text string) ([]*parse.Tree, error) {
	t := parse.New(name)
	t.Mode = parse.SkipFuncCheck
	set := map[string]*parse.Tree{}
	if _, err := t.Parse(text, "", "", set); err != nil {
		return nil, err
	}
	trees := make([]*parse.Tree, 0, len(set))
	for _, tr := range set {
		trees = append(trees, tr)
	}
	return trees, nil
}

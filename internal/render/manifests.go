package render

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// item is a rendered object and where it came from, for messages.
type item struct {
	obj    *unstructured.Unstructured
	origin string
}

// yamlDoc is one document of a YAML stream.
type yamlDoc struct {
	index int    // 1-based position among the non-blank documents of the stream
	line  int    // 1-based line of the stream on which the document starts
	text  []byte // the document, without its "---" separator
}

// splitDocuments cuts a YAML stream on "---" lines. Blank documents are
// dropped; comment-only ones are kept (they parse to nothing later) so that
// document numbers match what a reader counts.
func splitDocuments(data []byte) []yamlDoc {
	var docs []yamlDoc
	var cur bytes.Buffer
	start, lineNo := 1, 0
	flush := func() {
		if len(bytes.TrimSpace(cur.Bytes())) > 0 {
			docs = append(docs, yamlDoc{index: len(docs) + 1, line: start, text: append([]byte(nil), cur.Bytes()...)})
		}
		cur.Reset()
	}
	for len(data) > 0 {
		lineNo++
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			line, data = data, nil
		}
		if rest, ok := separator(line); ok {
			flush()
			start = lineNo
			if len(bytes.TrimSpace(rest)) == 0 {
				start = lineNo + 1
			} else {
				cur.Write(rest)
			}
			continue
		}
		cur.Write(line)
	}
	flush()
	return docs
}

// separator reports whether line is a YAML document start ("---" alone or
// followed by blanks, a comment or inline content) and returns what follows it.
func separator(line []byte) ([]byte, bool) {
	if !bytes.HasPrefix(line, []byte("---")) {
		return nil, false
	}
	rest := line[3:]
	if len(bytes.TrimSpace(rest)) == 0 {
		return nil, true
	}
	if rest[0] == ' ' || rest[0] == '\t' {
		rest = bytes.TrimLeft(rest, " \t")
		if rest[0] == '#' {
			return nil, true
		}
		return rest, true
	}
	return nil, false
}

// docLocation names a document for messages: `<origin>, document 2 at line 14`.
func docLocation(origin string, d yamlDoc, withLine bool) string {
	if withLine {
		return fmt.Sprintf("%s, document %d at line %d", origin, d.index, d.line)
	}
	return fmt.Sprintf("%s, document %d", origin, d.index)
}

var secretKindRE = regexp.MustCompile(`(?m)^kind:\s*["']?Secret["']?\s*(#.*)?$`)

// withheld stands, in an error about content read from a Secret, for what the tool that failed
// on it (the YAML parser, Go's template engine, kustomize, Helm) said: their messages may quote
// the content. Redaction follows where content came from, not what it declares: a ConfigMap
// manifest read from a Secret is as secret as the Secret.
const withheld = "details withheld because the content is read from a Secret"

// parseStream parses a multi-document YAML stream into objects. origin names
// the stream in messages; withLines adds line numbers (false for generated
// text whose lines mean nothing to the user); sensitive marks content read
// from a Secret (see Document.Sensitive).
func parseStream(origin string, data []byte, withLines, sensitive bool) ([]item, error) {
	var items []item
	for _, d := range splitDocuments(data) {
		it, err := parseDocumentFrom(docLocation(origin, d, withLines), d, withLines, sensitive)
		if err != nil {
			return nil, err
		}
		items = append(items, it...)
	}
	return items, nil
}

// parseDocument parses one YAML document, located by loc in messages, into
// zero (comments only), one or, for a v1 List, several objects.
func parseDocument(loc string, d yamlDoc, withLines bool) ([]item, error) {
	return parseDocumentFrom(loc, d, withLines, false)
}

// parseDocumentFrom is parseDocument of content that may have been read from a
// Secret (sensitive).
func parseDocumentFrom(loc string, d yamlDoc, withLines, sensitive bool) ([]item, error) {
	v, err := yamlToValue(d.text)
	if err != nil {
		return nil, yamlError(loc, d, err, withLines, sensitive)
	}
	if v == nil { // comments only
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, newError(ReasonInvalidYAML, loc, fmt.Sprintf("document is %s, not a Kubernetes object (a YAML map with apiVersion, kind and metadata)", typeName(v)), nil)
	}
	objs, err := toObjects(loc, m)
	if err != nil {
		return nil, err
	}
	items := make([]item, 0, len(objs))
	for _, o := range objs {
		items = append(items, item{obj: o, origin: loc})
	}
	return items, nil
}

// yamlError reports a YAML syntax error at its absolute line. For content read
// from a Secret, or a document that is a Secret, the parser's message is
// withheld, and not kept as the cause either: some parser messages quote the
// offending text.
func yamlError(loc string, d yamlDoc, err error, withLines, sensitive bool) error {
	line, msg := yamlErrorDetail(err)
	where := ""
	if line > 0 {
		if withLines {
			where = fmt.Sprintf(" at line %d", d.line+line-1)
		} else {
			where = fmt.Sprintf(" at line %d of the document", line)
		}
	}
	cause := err
	switch {
	case sensitive:
		msg, cause = withheld, nil
	case secretKindRE.Match(d.text):
		msg, cause = "details withheld because the document is a Secret", nil
	}
	return newError(ReasonInvalidYAML, loc, "invalid YAML"+where+": "+msg, cause)
}

// withholdTemplateError rewrites a Go template error about content read from a
// Secret to say where it failed (origin and line) and no more: Go's messages
// quote the template's text and the values it was given. Other errors (limits,
// a context that ended) quote nothing and pass unchanged.
func withholdTemplateError(err error) error {
	var re *Error
	if !errors.As(err, &re) || re.Reason != ReasonTemplateFailed {
		return err
	}
	what := "Go template failed"
	if strings.HasPrefix(re.Message, "Go template does not parse") {
		what = "Go template does not parse"
	}
	if line := templateLine(re.Object, re.Err); line != "" {
		what += " at " + line
	}
	re.Message, re.Err = what+": "+withheld, nil
	return err
}

// toObjects validates one parsed document and expands v1 List kinds.
func toObjects(loc string, m map[string]any) ([]*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: m}
	apiVersion, kind := u.GetAPIVersion(), u.GetKind()
	if apiVersion == "" || kind == "" {
		return nil, newError(ReasonMissingKindOrName, loc, "object has no apiVersion or kind; every object needs both", nil)
	}
	if kind == "List" && apiVersion == "v1" {
		raw, ok := m["items"].([]any)
		if !ok && m["items"] != nil {
			return nil, newError(ReasonInvalidYAML, loc, "v1 List has items that are not a list", nil)
		}
		var out []*unstructured.Unstructured
		for i, it := range raw {
			itemLoc := fmt.Sprintf("%s, List item %d", loc, i+1)
			im, ok := it.(map[string]any)
			if !ok {
				return nil, newError(ReasonInvalidYAML, itemLoc, fmt.Sprintf("List item is %s, not a Kubernetes object", typeName(it)), nil)
			}
			objs, err := toObjects(itemLoc, im)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
		return out, nil
	}
	if _, ok := m["metadata"].(map[string]any); !ok && m["metadata"] != nil {
		return nil, newError(ReasonInvalidYAML, loc, fmt.Sprintf("%s %s has metadata that is not a map", apiVersion, kind), nil)
	}
	if u.GetName() == "" {
		msg := fmt.Sprintf("%s %s has no metadata.name; every object needs one", apiVersion, kind)
		if u.GetGenerateName() != "" {
			msg = fmt.Sprintf("%s %s uses metadata.generateName; Holdfast needs a stable metadata.name to track the object, so set one", apiVersion, kind)
		}
		return nil, newError(ReasonMissingKindOrName, loc, msg, nil)
	}
	clean(u)
	return []*unstructured.Unstructured{u}, nil
}

// clean drops what the API server owns: status, and the metadata fields that
// a manifest exported from a live cluster (kubectl get -o yaml) carries and
// that would break or be ignored by server-side apply.
func clean(u *unstructured.Unstructured) {
	delete(u.Object, "status")
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "managedFields"} {
		delete(md, f)
	}
}

// objectRef names an object: "apps/v1 Deployment team-a/web", or
// "v1 Namespace team-a" without a namespace.
func objectRef(u *unstructured.Unstructured) string {
	name := u.GetName()
	if ns := u.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return strings.Join([]string{u.GetAPIVersion(), u.GetKind(), name}, " ")
}

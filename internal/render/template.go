package render

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"text/template"
	tparse "text/template/parse"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// templateData is what Go templates in values and manifests see.
type templateData struct {
	// Cluster is the target cluster: .Cluster.Name, .Cluster.Labels.region...
	Cluster Cluster
	// Service is the service name.
	Service string
	// TargetNamespace is the service's target namespace ("" if none).
	TargetNamespace string
	// Values are the merged values; empty while the values themselves are
	// rendered.
	Values map[string]any
}

// unrepeatable are sprig functions whose result changes from one call to the
// next (keys, certificates, salted hashes). Sprig's hermetic map already drops
// time, randomness, the environment and DNS. A rendered service must be a
// function of its declaration: otherwise every render would differ, the
// digest would never settle and the service would be re-applied forever. The
// environment would also leak the controller's own variables.
var unrepeatable = []string{
	"genPrivateKey", "genCA", "genCAWithKey", "genSelfSignedCert",
	"genSelfSignedCertWithKey", "genSignedCert", "genSignedCertWithKey",
	"bcrypt", "htpasswd", "randInt", "shuffle",
}

// funcMap returns sprig's repeatable functions plus Helm's toYaml, fromYaml
// and required, so values and manifests read like Helm templates. Templates
// get them through budget.goFuncs, capped and under the render's limits.
func funcMap() template.FuncMap {
	f := sprig.HermeticTxtFuncMap()
	for _, name := range unrepeatable {
		delete(f, name)
	}
	f["toYaml"] = func(v any) (string, error) {
		out, err := yaml.Marshal(v)
		if err != nil {
			return "", err
		}
		return strings.TrimSuffix(string(out), "\n"), nil
	}
	f["fromYaml"] = func(s string) (map[string]any, error) {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			return nil, err
		}
		return m, nil
	}
	f["required"] = func(msg string, v any) (any, error) {
		if v == nil {
			return nil, errors.New(msg)
		}
		if s, ok := v.(string); ok && s == "" {
			return nil, errors.New(msg)
		}
		return v, nil
	}
	return f
}

// executeTemplate renders text as a Go template named name (the name appears
// in error locations, e.g. "inline manifests:3:7"). Missing map keys render as
// empty strings, as in Helm, so {{ .Cluster.Labels.region | default "eu" }}
// works on clusters without the label.
//
// The template runs under the render's budget b: its text is instrumented
// (instrument.go), its functions are capped (funcs.go) and it executes into a
// writer that stops it once the render's output or time is used up.
func executeTemplate(name, text string, data templateData, b *budget) ([]byte, error) {
	parse := func(text string) (*template.Template, error) {
		return template.New(name).Option("missingkey=zero").Funcs(b.goFuncs()).Parse(text)
	}
	inst, err := instrument(text, false)
	var t *template.Template
	if err == nil {
		t, err = parse(inst)
	}
	if err != nil {
		// Report errors against the user's text, not the instrumented one.
		if _, perr := parse(text); perr != nil {
			return nil, newError(ReasonTemplateFailed, name, "Go template does not parse: "+templateMessage(perr), perr)
		}
		return nil, notInstrumented(name)
	}
	trees := make([]*tparse.Tree, 0, len(t.Templates()))
	for _, tt := range t.Templates() {
		trees = append(trees, tt.Tree)
	}
	if err := checkInstrumented(trees, false); err != nil {
		return nil, notInstrumented(name)
	}

	w := &limitedWriter{b: b}
	err = t.Execute(w, data)
	if v := b.violation(); v != nil {
		return nil, limitExceeded(name, templateLine(name, err), v)
	}
	if err != nil {
		if cerr := b.ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, newError(ReasonTemplateFailed, name, "Go template failed: "+templateMessage(err), err)
	}
	// With missingkey=zero, a missing key of a map[string]any prints
	// "<no value>"; Helm replaces it with nothing and so do we.
	return bytes.ReplaceAll(w.buf.Bytes(), []byte("<no value>"), nil), nil
}

// notInstrumented: a template that parses but that Holdfast could not put
// under its render limits. It is refused rather than run without them.
func notInstrumented(name string) *Error {
	return newError(ReasonRenderLimitExceeded, name,
		"the render limits cannot be applied to this Go template; simplify its syntax (comments inside actions, unusual literals)", nil)
}

// templateLine returns "line N" from a template execution error located in
// name, or "".
func templateLine(name string, err error) string {
	if err == nil {
		return ""
	}
	m := regexp.MustCompile(`^template: ` + regexp.QuoteMeta(name) + `:(\d+):`).FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	return "line " + m[1]
}

// templateMessage drops Go's "template: " prefix; what remains starts with
// name:line:col.
func templateMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "template: ")
}

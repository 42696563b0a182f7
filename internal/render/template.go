package render

import (
	"bytes"
	"errors"
	"strings"
	"text/template"

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
// and required, so values and manifests read like Helm templates.
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
func executeTemplate(name, text string, data templateData) ([]byte, error) {
	t, err := template.New(name).Option("missingkey=zero").Funcs(funcMap()).Parse(text)
	if err != nil {
		return nil, newError(ReasonTemplateFailed, name, "Go template does not parse: "+templateMessage(err), err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return nil, newError(ReasonTemplateFailed, name, "Go template failed: "+templateMessage(err), err)
	}
	// With missingkey=zero, a missing key of a map[string]any prints
	// "<no value>"; Helm replaces it with nothing and so do we.
	return bytes.ReplaceAll(buf.Bytes(), []byte("<no value>"), nil), nil
}

// templateMessage drops Go's "template: " prefix; what remains starts with
// name:line:col.
func templateMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "template: ")
}

package templatesource_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
)

// Manifests read from a Secret are Secret content whatever they declare: a render error about
// them names the Secret and the line, and quotes nothing of them. The same text from a
// ConfigMap gets the parser's own words.
func TestSecretManifestsAreNotQuotedInRenderErrors(t *testing.T) {
	const marker = "s3cr3t-marker"
	broken := map[string]string{
		// The YAML parser quotes an unknown anchor's name, a map key and a value it cannot convert.
		"anchor.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: db}\ndata:\n  password: *" + marker + "\n",
		"mapkey.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: db}\ndata:\n  ? [" + marker + "]\n  : x\n",
		"convert.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: db}\nspec:\n  replicas: !!int " + marker + "\n",
	}
	binary := map[string][]byte{}
	for k, v := range broken {
		binary[k] = []byte(v)
	}
	r := reader([]*corev1.ConfigMap{configMap("plain", broken, nil)}, []*corev1.Secret{secret("creds", binary)})
	for key := range broken {
		t.Run(key, func(t *testing.T) {
			render1 := func(kind holdfastv1.ManifestSourceKind, name string) error {
				src, err := r.Source(context.Background(), template(holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{
					{Kind: kind, Name: name, Key: key}}}))
				if err != nil {
					t.Fatal(err)
				}
				_, err = render.Render(context.Background(), render.Request{Service: "db", Source: src}, nil)
				if err == nil {
					t.Fatal("Render succeeded")
				}
				return err
			}
			err := render1(holdfastv1.ManifestSourceSecret, "creds")
			if render.ReasonOf(err) != render.ReasonInvalidYAML {
				t.Errorf("reason %q, want %s: %v", render.ReasonOf(err), render.ReasonInvalidYAML, err)
			}
			if want := `Secret templates/creds key "` + key + `", document 1 at line 1`; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %q", err, want)
			}
			if strings.Contains(err.Error(), marker) {
				t.Errorf("error quotes the Secret's content: %q", err)
			}
			if err := render1(holdfastv1.ManifestSourceConfigMap, "plain"); !strings.Contains(err.Error(), marker) {
				t.Errorf("error about a ConfigMap %q lost the parser's words", err)
			}
		})
	}
}

// Every document read from a Secret is marked sensitive, whole Secrets as single keys; none read
// from a ConfigMap is.
func TestSecretDocumentsAreSensitive(t *testing.T) {
	r := reader([]*corev1.ConfigMap{configMap("plain", map[string]string{"a.yaml": "kind: A", "b.yaml": "kind: B"}, nil)},
		[]*corev1.Secret{secret("creds", map[string][]byte{"a.yaml": []byte("kind: A"), "b.yaml": []byte("kind: B")})})
	src, err := r.Source(context.Background(), template(holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{
		{Kind: holdfastv1.ManifestSourceConfigMap, Name: "plain"},
		{Kind: holdfastv1.ManifestSourceSecret, Name: "creds"},
		{Kind: holdfastv1.ManifestSourceConfigMap, Name: "plain", Key: "b.yaml"},
		{Kind: holdfastv1.ManifestSourceSecret, Name: "creds", Key: "a.yaml"},
	}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Documents) != 6 {
		t.Fatalf("%d documents, want 6", len(src.Documents))
	}
	for _, d := range src.Documents {
		if want := strings.HasPrefix(d.Origin, "Secret "); d.Sensitive != want {
			t.Errorf("%s: Sensitive = %v, want %v", d.Origin, d.Sensitive, want)
		}
	}
}

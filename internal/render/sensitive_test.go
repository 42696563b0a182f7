package render_test

import (
	"context"
	"strings"
	"testing"

	"holdfast.dev/holdfast/internal/chartserver"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/render/chartsource"
)

// TestSensitiveContentIsNeverQuoted renders content read from a Secret that fails in every way
// the parser, the template engine or kustomize would quote it, and checks that the error names
// where it came from (and the line, where there is one) and quotes none of it. The same content
// not marked sensitive keeps the tools' words, so that the markers are known to reach them.
func TestSensitiveContentIsNeverQuoted(t *testing.T) {
	const marker = "s3cr3tMarker"
	const docOrigin = `Secret team-a/creds key "app.yaml"`
	const valuesOrigin = `Secret team-a/values key "values.yaml"`
	ok := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\n"
	doc := func(content string) render.Source {
		return render.Source{Documents: []render.Document{{Origin: docOrigin, Content: []byte(content), Sensitive: true}}}
	}
	tmplDoc := func(content string) render.Source {
		s := doc(content)
		s.GoTemplate = true
		return s
	}
	inline := render.Source{Inline: ok}
	secretValues := render.ValuesOrigin{Origin: valuesOrigin, Sensitive: true}
	kustomize := func(goTemplate bool, files map[string]string, sensitive ...string) render.Source {
		k := &render.Kustomize{Files: map[string][]byte{}, SensitiveFiles: map[string]bool{}}
		for name, content := range files {
			k.Files[name] = []byte(content)
		}
		for _, name := range sensitive {
			k.SensitiveFiles[name] = true
		}
		return render.Source{Kustomize: k, GoTemplate: goTemplate}
	}
	tests := []struct {
		name   string
		req    render.Request
		reason string
		want   []string // in the message
		// lineOnly: the tools' own message quotes nothing; the case checks that the line is kept.
		lineOnly bool
	}{
		{name: "manifest: unknown anchor", req: render.Request{Source: doc(ok + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n  k: *" + marker + "\n")},
			reason: render.ReasonInvalidYAML, want: []string{docOrigin + ", document 2 at line 5", "invalid YAML", "read from a Secret"}},
		{name: "manifest: map key", req: render.Request{Source: doc("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n  ? [" + marker + "]\n  : x\n")},
			reason: render.ReasonInvalidYAML, want: []string{docOrigin + ", document 1 at line 1"}},
		{name: "manifest: value of the wrong type", req: render.Request{Source: doc("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n  k: !!int " + marker + "\n")},
			reason: render.ReasonInvalidYAML, want: []string{docOrigin}},
		{name: "manifest: syntax error keeps its line", req: render.Request{Source: doc(ok + "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n   k: " + marker + "\n")},
			reason: render.ReasonInvalidYAML, want: []string{docOrigin + ", document 2 at line 5", "invalid YAML at line 9"}, lineOnly: true},
		{name: "manifest: template does not parse", req: render.Request{Source: tmplDoc("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ " + marker + " }}}\n")},
			reason: render.ReasonTemplateFailed, want: []string{docOrigin, "does not parse at line 3"}},
		{name: "manifest: template fails", req: render.Request{Source: tmplDoc("apiVersion: v1\n\nname: {{ required \"" + marker + "\" .Values.nope }}\n")},
			reason: render.ReasonTemplateFailed, want: []string{docOrigin, "Go template failed at line 3"}},
		{name: "ServiceTemplate values: unknown anchor", req: render.Request{TemplateValues: "a: *" + marker + "\n", TemplateValuesFrom: secretValues, Source: inline},
			reason: render.ReasonInvalidValues, want: []string{valuesOrigin, "not valid YAML"}},
		{name: "service values: syntax error keeps its line", req: render.Request{ServiceValues: "a: b\n  c: " + marker + "\n", ServiceValuesFrom: secretValues, Source: inline},
			reason: render.ReasonInvalidValues, want: []string{valuesOrigin, "not valid YAML at line 2"}, lineOnly: true},
		{name: "values: template does not parse", req: render.Request{ServiceValues: "a: {{ " + marker + " }}\n", ServiceValuesFrom: secretValues, Source: inline},
			reason: render.ReasonTemplateFailed, want: []string{valuesOrigin, "at line 1"}},
		{name: "values: template fails", req: render.Request{TemplateValues: "a: {{ required \"" + marker + "\" .Cluster.Labels.x }}\n", TemplateValuesFrom: secretValues, Source: inline},
			reason: render.ReasonTemplateFailed, want: []string{valuesOrigin, "at line 1"}},
		{name: "kustomize: a resource file does not parse", req: render.Request{Source: kustomize(false, map[string]string{
			"kustomization.yaml": "resources: [app.yaml]\n",
			"app.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n  k: *" + marker + "\n",
		}, "app.yaml")},
			reason: render.ReasonKustomizeFailed, want: []string{"kustomize overlay .", "app.yaml", "read from a Secret"}},
		{name: "kustomize: a kustomization names a missing resource", req: render.Request{Source: kustomize(false, map[string]string{
			"kustomization.yaml": "resources: [" + marker + ".yaml]\n",
		}, "kustomization.yaml")},
			reason: render.ReasonKustomizeFailed, want: []string{"kustomize overlay . (kustomization.yaml)", "not among the overlay's files"}},
		{name: "kustomize: a file's template fails", req: render.Request{Source: kustomize(true, map[string]string{
			"kustomization.yaml": "resources: [app.yaml]\n",
			"app.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ " + marker + " }}'}\n",
		}, "app.yaml")},
			reason: render.ReasonTemplateFailed, want: []string{"kustomize file app.yaml", "at line 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Service = "web"
			_, err := render.Render(context.Background(), tt.req, nil)
			if err == nil {
				t.Fatal("Render succeeded")
			}
			if got := render.ReasonOf(err); got != tt.reason {
				t.Errorf("reason %q, want %s: %v", got, tt.reason, err)
			}
			if strings.Contains(err.Error(), marker) {
				t.Errorf("error quotes content read from a Secret: %q", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error message spans lines: %q", err)
			}

			// Not read from a Secret, the same content fails with the tools' own words.
			if tt.lineOnly {
				return
			}
			plain := tt.req
			plain.TemplateValuesFrom, plain.ServiceValuesFrom = render.ValuesOrigin{}, render.ValuesOrigin{}
			if docs := plain.Source.Documents; docs != nil {
				plain.Source.Documents = []render.Document{{Origin: docs[0].Origin, Content: docs[0].Content}}
			}
			if k := plain.Source.Kustomize; k != nil {
				plain.Source.Kustomize = &render.Kustomize{Files: k.Files, Path: k.Path}
			}
			if _, err := render.Render(context.Background(), plain, nil); err == nil || !strings.Contains(err.Error(), marker) {
				t.Errorf("not read from a Secret, the error %v does not quote the content: the case tests nothing", err)
			}
		})
	}
}

// Values read from a Secret reach Helm, whose messages quote what a template made of them: its
// errors about values say what failed and no more.
func TestSensitiveValuesAreNotQuotedByHelm(t *testing.T) {
	const marker = "s3cr3tMarker"
	chart, err := chartserver.Package(map[string][]byte{
		"Chart.yaml":          []byte("apiVersion: v2\nname: quoting\nversion: 1.0.0\n"),
		"templates/fail.yaml": []byte("{{ if .Values.fail }}{{ fail .Values.fail }}{{ end }}\n"),
		"templates/yaml.yaml": []byte("{{ if .Values.anchor }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  k: *{{ .Values.anchor }}\n{{ end }}\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := servers(t, chart)
	charts := chartsource.New(chartsource.Options{})
	for _, tt := range []struct {
		name, values, reason string
		want                 []string
	}{
		{"a template fails with a value", "fail: " + marker + "\n", render.ReasonInvalidValues,
			[]string{"chart quoting 1.0.0", "the chart's templates failed with these values", "values are read from a Secret"}},
		{"a template renders invalid YAML from a value", "anchor: " + marker + "\n", render.ReasonInvalidYAML,
			[]string{"chart quoting 1.0.0", "values are read from a Secret"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := render.Request{Service: "svc", ServiceValues: tt.values,
				Source: render.Source{Helm: &render.Helm{RepoURL: repo.URL(), Chart: "quoting"}}}
			if _, err := render.Render(context.Background(), req, charts); err == nil || !strings.Contains(err.Error(), marker) {
				t.Fatalf("values from the spec: error %v does not quote them: the case tests nothing", err)
			}
			req.ServiceValuesFrom = render.ValuesOrigin{Origin: `Secret team-a/values key "values.yaml"`, Sensitive: true}
			_, err := render.Render(context.Background(), req, charts)
			if got := render.ReasonOf(err); got != tt.reason {
				t.Errorf("reason %q, want %s: %v", got, tt.reason, err)
			}
			if err == nil || strings.Contains(err.Error(), marker) {
				t.Fatalf("error quotes values read from a Secret: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

package render

import (
	"context"
	"maps"
	"strings"
	"testing"
	"text/template"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
)

// fidelityTemplates exercise what the instrumentation rewrites: trimming on
// both sides of ranges, defines and prints, comments, strings holding
// delimiters, declarations, else branches, break and continue.
var fidelityTemplates = map[string]string{
	"plain text":         "apiVersion: v1\nkind: ConfigMap\n",
	"empty":              "",
	"print":              "name: {{ .Cluster.Name }}\nns: {{.TargetNamespace}}!",
	"trim print":         "a:   {{- .Cluster.Name -}}   :b\n",
	"trim newline print": "a:\n{{- .Cluster.Name\n-}}\n:b",
	"missing key":        "x: {{ .Values.nope }}|{{ .Values.a }}|{{ .Cluster.Labels.nope }}",
	"numbers and consts": "{{ 3 }} {{ 1.5 }} {{ 1e3 }} {{ 0x1F }} {{ -2 }} {{ 'a' }} {{ true }} {{ `raw` }}",
	"pipelines":          `{{ .Cluster.Name | upper | quote }} {{ (printf "%s-%d" .Service 3) }} {{ (.Cluster).Name }}`,
	"declarations":       `{{ $x := 1 }}{{ $x = 2 }}{{ $x }}{{ $y := .Cluster.Labels }}{{ $y.region }}`,
	"range":              "items:\n{{- range $i, $v := until 3 }}\n  - {{ $i }}: {{ $v -}}\n{{ end }}\nend",
	"range else":         "{{ range .Values.none }}x{{ else }}empty{{ end }}|{{ range $k, $v := .Cluster.Labels }}{{ $k }}={{ $v }};{{ end }}",
	"range trims":        "[\n  {{- range until 3 -}}\n    {{ . }},\n  {{- end -}}\n]",
	"range int":          "{{ range 3 }}{{ . }}{{ end }}",
	"break continue":     "{{ range until 10 }}{{ if eq . 2 }}{{ continue }}{{ end }}{{ if eq . 5 }}{{ break }}{{ end }}{{ . }}{{ end }}",
	"nested ranges":      "{{ range $a := until 2 }}{{ range $b := until 2 }}({{ $a }},{{ $b }}){{ end }}\n{{ end }}",
	"define template": `{{- define "labels" -}}
app: {{ .Service }}
{{- range $k, $v := .Cluster.Labels }}
{{ $k }}: {{ $v }}
{{- end }}
{{- end -}}
labels:
  {{- template "labels" . }}
other: {{ block "blk" . }}block {{ .Service }}{{ end }}`,
	"comments":             "a{{/* c }} {{ */}}b {{- /* trimmed */ -}} c {{/* x */ -}}\n  d",
	"delimiters in quotes": `{{ "}}" }}{{ "{{ .x }}" }}{{ ` + "`}}{{`" + ` }}{{ '}' }}{{ "\"}}" }}`,
	"if else chains":       `{{ if .Values.a }}a{{ else if eq .Service "web" }}web{{ else }}other{{ end }}{{ with .Cluster.Labels.region }}{{ . }}{{ else with .Cluster.Name }}{{ . }}{{ end }}`,
	"multiline action": `{{ list 1 2
  3 | toJson }}`,
	"values and toYaml": "{{ toYaml .Cluster.Labels | indent 2 }}\n{{ .Cluster.Labels }}\n{{ .Cluster }}",
	"unicode":           "{{ $größe := 3 }}{{ $größe }} ünï {{ \"çà\" }}",
}

func TestInstrumentKeepsOutput(t *testing.T) {
	data := templateData{
		Cluster: Cluster{Name: "prod", Namespace: "fleet", Labels: map[string]string{"region": "eu", "tier": "gold"}},
		Service: "web", TargetNamespace: "apps", Values: map[string]any{"a": nil, "list": []any{"x", "y"}},
	}
	for name, text := range fidelityTemplates {
		t.Run(name, func(t *testing.T) {
			plain, err := template.New(name).Option("missingkey=zero").Funcs(funcMap()).Parse(text)
			if err != nil {
				t.Fatalf("plain parse: %v", err)
			}
			var want strings.Builder
			if err := plain.Execute(&want, data); err != nil {
				t.Fatalf("plain execute: %v", err)
			}
			got, err := executeTemplate(name, text, data, newBudget(context.Background(), Limits{}))
			if err != nil {
				t.Fatalf("instrumented: %v", err)
			}
			if w := strings.ReplaceAll(want.String(), "<no value>", ""); string(got) != w {
				inst, _ := instrument(text, false)
				t.Errorf("output differs\n got: %q\nwant: %q\ninstrumented text: %s", got, w, inst)
			}
		})
	}
}

// TestInstrumentHelmKeepsOutput renders a chart with Helm's engine as it is
// and instrumented, with Holdfast's functions, and compares every file.
func TestInstrumentHelmKeepsOutput(t *testing.T) {
	templates := map[string]string{
		"templates/_helpers.tpl": `{{- define "c.labels" -}}
app: {{ .Chart.Name }}
{{- range $k, $v := .Values.labels }}
{{ $k }}: {{ $v | quote }}
{{- end }}
{{- end -}}
{{- define "c.render" -}}
{{- if typeIs "string" .value }}{{- tpl .value .context }}{{- else }}{{- tpl (.value | toYaml) .context }}{{- end }}
{{- end -}}`,
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
  labels:
    {{- include "c.labels" . | nindent 4 }}
data:
  kube: {{ .Capabilities.KubeVersion }} {{ .Capabilities.KubeVersion.Minor }}
  hasApps: {{ .Capabilities.APIVersions.Has "apps/v1" | quote }}
  yaml: |
    {{- toYaml .Values.labels | nindent 4 }}
  yaml2: {{ .Values.labels | toYaml | quote }}
  json: {{ toJson .Values.labels | squote }}
  pretty: {{ toYamlPretty .Values.nested | quote }}
  toml: {{ .Values.labels | toToml | quote }}
  tpl: {{ tpl .Values.tplText . | quote }}
  render: {{ include "c.render" (dict "value" .Values.nested "context" $) | quote }}
  file: {{ .Files.Get "files/a.txt" | trim }}
  missing: "{{ .Values.nope }}"
  ranges: {{ range $i := until 3 }}{{ $i }}{{ end }}
  release: {{ .Release.Namespace }}/{{ .Template.Name }}
`,
		"templates/NOTES.txt": "Installed {{ .Release.Name }}.",
	}
	ch := &chart.Chart{
		Metadata: &chart.Metadata{Name: "c", Version: "1.0.0", APIVersion: "v2"},
		Values: map[string]any{
			"labels":  map[string]any{"tier": "gold", "team": "a"},
			"nested":  map[string]any{"k": "{{ .Release.Name }}-v", "l": []any{1, 2}},
			"tplText": `{{ define "inner" }}in-{{ . }}{{ end }}{{ range until 2 }}{{ template "inner" . }}{{ end }} {{ .Release.Name }}`,
		},
		Files: []*common.File{{Name: "files/a.txt", Data: []byte("file content\n")}},
	}
	for name, text := range templates {
		ch.Templates = append(ch.Templates, &common.File{Name: name, Data: []byte(text)})
	}
	want := compareHelmRender(t, ch, map[string]any{})
	if !strings.Contains(want["c/templates/cm.yaml"], "kube: v1.") {
		t.Errorf("fixture does not print KubeVersion through its String method: %q", want["c/templates/cm.yaml"])
	}
}

// TestInstrumentHelmScaffold compares on the chart `helm create` makes, with
// every optional part turned on.
func TestInstrumentHelmScaffold(t *testing.T) {
	dir, err := chartutil.Create("scaffold", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := compareHelmRender(t, ch, map[string]any{
		"ingress":        map[string]any{"enabled": true, "tls": []any{map[string]any{"secretName": "tls", "hosts": []any{"a.example"}}}},
		"autoscaling":    map[string]any{"enabled": true, "targetMemoryUtilizationPercentage": 80},
		"serviceAccount": map[string]any{"create": true, "annotations": map[string]any{"a": "b"}},
		"podAnnotations": map[string]any{"x": "y"},
		"resources":      map[string]any{"limits": map[string]any{"cpu": "100m"}},
	})
	if len(out) < 5 || !strings.Contains(out["scaffold/templates/ingress.yaml"], "kind: Ingress") {
		t.Errorf("scaffold rendered %d files, ingress %q", len(out), out["scaffold/templates/ingress.yaml"])
	}
}

// compareHelmRender renders ch with Helm's engine as it is and instrumented,
// with Holdfast's functions, requires equal output and returns it.
func compareHelmRender(t *testing.T, ch *chart.Chart, values map[string]any) map[string]string {
	t.Helper()
	render := func(instrumented bool) map[string]string {
		t.Helper()
		c := *ch
		var e engine.Engine
		if instrumented {
			if err := instrumentChart(&c); err != nil {
				t.Fatal(err)
			}
			e.CustomTemplateFuncs = newBudget(context.Background(), Limits{}).helmFuncs()
		}
		vals, err := util.ToRenderValues(&c, values, common.ReleaseOptions{Name: "rel", Namespace: "ns", IsInstall: true}, common.DefaultCapabilities.Copy())
		if err != nil {
			t.Fatal(err)
		}
		out, err := e.Render(&c, vals)
		if err != nil {
			t.Fatalf("instrumented=%v: %v", instrumented, err)
		}
		return out
	}
	want, got := render(false), render(true)
	if !maps.Equal(got, want) {
		for k := range want {
			if got[k] != want[k] {
				t.Errorf("%s differs\n got: %q\nwant: %q", k, got[k], want[k])
			}
		}
	}
	return want
}

func TestInstrumentText(t *testing.T) {
	tests := []struct {
		name, in, want string
		helm           bool
	}{
		{name: "print", in: "a {{ .x }} b", want: "{{_holdfastStep 4}}a {{ .x  | _holdfastPrint}} b"},
		{name: "trimmed print", in: "{{- .x -}}", want: "{{_holdfastStep 0}}{{- .x | _holdfastPrint -}}"},
		{name: "declaration is not printed", in: "{{ $x := 1 }}{{ $x = 2 }}{{ $i, $v := 3 }}", want: "{{_holdfastStep 0}}{{ $x := 1 }}{{ $x = 2 }}{{ $i, $v := 3 }}"},
		{name: "range body counts its text", in: "{{ range .l }}abc{{ if .y }}de{{ end }}{{ end }}xy",
			want: "{{_holdfastStep 2}}{{ range .l }}{{_holdfastStep 5}}abc{{ if .y }}de{{ end }}{{ end }}xy"},
		{name: "trim after range is kept", in: "{{ range . -}}\n  x\n{{- end }}",
			want: "{{_holdfastStep 0}}{{ range . -}}{{- _holdfastStep 5 -}}\n  x\n{{- end }}"},
		{name: "define", in: `{{ define "a" }}t{{ end }}`, want: `{{_holdfastStep 0}}{{ define "a" }}{{_holdfastStep 1}}t{{ end }}`},
		{name: "comment", in: "{{/* {{ range }} */}}", want: "{{_holdfastStep 0}}{{/* {{ range }} */}}"},
		{name: "tpl argument", in: "{{ tpl .Values.t $ }}", helm: true,
			want: "{{_holdfastStep 0}}{{ tpl (_holdfastTpl .Values.t) $  | _holdfastPrint}}"},
		{name: "serialisers", in: `{{ toYaml (.a).b | nindent 2 }}{{ .a | toJson }}`, helm: true,
			want: `{{_holdfastStep 0}}{{ toYaml (_holdfastSized "toYaml" (.a).b) | nindent 2  | _holdfastPrint}}{{ .a | _holdfastSized "toJson" | toJson  | _holdfastPrint}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := instrument(tt.in, tt.helm)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("instrument =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestCheckInstrumented refuses trees the rewrite did not instrument.
func TestCheckInstrumented(t *testing.T) {
	for _, text := range []string{
		"{{ .x }}",
		"{{_holdfastStep 0}}{{ .x }}",
		"{{_holdfastStep 0}}{{ range . }}{{ end }}",
		`{{_holdfastStep 0}}{{ define "a" }}{{ end }}`,
		`{{_holdfastStep 0}}{{ $x := tpl .t . }}`,
		`{{_holdfastStep 0}}{{ $x := .a | toYaml }}`,
		`{{_holdfastStep 0}}{{ if (toJson .a) }}{{ end }}`,
	} {
		trees, err := parseTrees("t", text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if err := checkInstrumented(trees, true); err == nil {
			t.Errorf("checkInstrumented accepted %s", text)
		}
	}
}

// FuzzInstrument: whatever text/template accepts, the rewrite either refuses
// or instruments completely and renders the same output.
func FuzzInstrument(f *testing.F) {
	for _, text := range fidelityTemplates {
		f.Add(text)
	}
	f.Add(`{{ range $i := until 3 -}} {{- $i }} {{ end -}}`)
	f.Add("{{- /* c */ -}} x {{\t-3 }}")
	data := templateData{Cluster: Cluster{Name: "c", Labels: map[string]string{"a": "b"}}, Service: "s"}
	f.Fuzz(func(t *testing.T, text string) {
		plain, err := template.New("f").Option("missingkey=zero").Funcs(funcMap()).Parse(text)
		if err != nil {
			return
		}
		var want strings.Builder
		if plain.Execute(&want, data) != nil {
			return
		}
		got, err := executeTemplate("f", text, data, newBudget(context.Background(), Limits{}))
		if err != nil {
			if ReasonOf(err) == ReasonRenderLimitExceeded {
				return // refused or over a limit: never unbounded
			}
			t.Fatalf("instrumented template failed where the plain one did not: %v", err)
		}
		if w := strings.ReplaceAll(want.String(), "<no value>", ""); string(got) != w {
			t.Fatalf("output differs\n got: %q\nwant: %q", got, w)
		}
	})
}

package render_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/chartserver"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/render/chartsource"
)

// secretMarker is in every bomb: messages must not quote template text.
const secretMarker = "s3cr3t-marker"

// bombs are templates that would pin a worker or exhaust memory without
// limits, with what their error must mention. Each is valid as a Go template
// for manifests, values, Kustomize files and Helm charts.
var bombs = []struct {
	name     string
	template string
	want     []string
}{
	{"repeat", `{{ repeat 1000000000 "s3cr3t-marker" }}`, []string{"repeat would return more than 1 MiB"}},
	{"until", `{{ range until 100000000 }}x{{ end }}{{/* s3cr3t-marker */}}`, []string{"until would return more than 10000 elements"}},
	{"untilStep", `{{ range untilStep 0 1000000000 1 }}x{{ end }}{{/* s3cr3t-marker */}}`, []string{"untilStep would return more than 10000 elements"}},
	{"seq", `{{ seq 1 100000000 }}{{/* s3cr3t-marker */}}`, []string{"seq would return more than 10000 elements"}},
	{"three nested until 10000", `{{ range until 10000 }}{{ range until 10000 }}{{ range until 10000 }}{{ end }}{{ end }}{{ end }}{{/* s3cr3t-marker */}}`,
		[]string{"more than 100000 loop iterations"}},
	{"nested ranges over one list", `{{ $l := until 10000 }}{{ range $l }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}{{ end }}{{/* s3cr3t-marker */}}`,
		[]string{"more than 100000 loop iterations"}},
	{"range over a number", `{{ range 1000000000000 }}{{ end }}{{/* s3cr3t-marker */}}`, []string{"more than 100000 loop iterations"}},
	{"indent", `{{ indent 1000000000 "s3cr3t-marker" }}`, []string{"indent would return more than 1 MiB"}},
	{"nindent", `{{ "s3cr3t-marker" | nindent 1000000000 }}`, []string{"nindent would return more than 1 MiB"}},
	{"output bomb within element caps", `{{ range until 10000 }}{{ range until 10000 }}` + strings.Repeat(secretMarker+" ", 20) + `{{ end }}{{ end }}`,
		[]string{"wrote more than 16 MiB"}},
	{"doubling string", `{{ $s := "s3cr3t-marker" }}{{ range until 100 }}{{ $s = cat $s $s }}{{ end }}`, []string{"cat would return more than 1 MiB"}},
	{"printing a shared string many times", `{{ $s := repeat 1000000 "s" }}{{ $l := list }}{{ range until 100 }}{{ $l = append $l $s }}{{ end }}{{ $l }}{{/* s3cr3t-marker */}}`,
		[]string{"wrote more than 16 MiB"}},
	{"serialising a shared string many times", `{{ $s := repeat 1000000 "s" }}{{ $l := list }}{{ range until 100 }}{{ $l = append $l $s }}{{ end }}{{ toYaml $l }}{{/* s3cr3t-marker */}}`,
		[]string{"toYaml would return more than 1 MiB"}},
	{"join", `{{ join (repeat 1000000 "s") (until 100) }}{{/* s3cr3t-marker */}}`, []string{"join would return more than 1 MiB"}},
	{"replace", `{{ replace "s" (repeat 50000 "s3cr3t-marker") (repeat 100000 "s") }}`, []string{"replace would return more than 1 MiB"}},
	{"printf width", `{{ printf "%01000000d%01000000d%01000000d%01000000d%01000000d" 1 2 3 4 5 }}{{/* s3cr3t-marker */}}`,
		[]string{"printf would return more than 1 MiB"}},
	{"exponential recursion", `{{ define "r" }}{{ if lt . 40 }}{{ template "r" (add . 1) }}{{ template "r" (add . 1) }}{{ end }}{{ end }}{{ template "r" 0 }}{{/* s3cr3t-marker */}}`,
		[]string{"more than 100000 loop iterations"}},
}

// checkLimitError requires a RenderLimitExceeded error that is permanent (or,
// for a timeout, a transient RenderTimedOut), one line, mentions want and
// quotes nothing of the template.
func checkLimitError(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatal("Render succeeded")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Render ran into the test's deadline instead of a render limit: %v", err)
	}
	// Running out of time is retried (a busy controller may cause it); any other limit is not.
	timeout := strings.Contains(strings.Join(want, " "), "rendering took longer than")
	wantReason := render.ReasonRenderLimitExceeded
	if timeout {
		wantReason = render.ReasonRenderTimedOut
	}
	if r := render.ReasonOf(err); r != wantReason {
		t.Fatalf("reason = %q, want %s: %v", r, wantReason, err)
	}
	if render.Transient(err) != timeout {
		t.Errorf("Transient = %v for %v", !timeout, err)
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not mention %q", msg, w)
		}
	}
	if strings.Contains(msg, secretMarker) || strings.Contains(msg, "\n") {
		t.Errorf("error quotes the template or spans lines: %q", msg)
	}
}

// limitCtx bounds a test render: a bomb has to be stopped by its budget well
// before this deadline (the render's own timeout is longer, so it is not what
// stops it).
func limitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// noTimeout leaves only the deterministic limits to stop a bomb. MaxSteps is
// lower than its default to keep the tests quick on a slow machine;
// TestRenderLimitsDefaults runs with the defaults.
var noTimeout = render.Limits{Timeout: time.Hour, MaxSteps: 100_000}

func TestRenderLimitsGoTemplates(t *testing.T) {
	for _, bomb := range bombs {
		t.Run("manifests/"+bomb.name, func(t *testing.T) {
			_, err := render.Render(limitCtx(t), render.Request{Service: "web", Limits: noTimeout,
				Source: render.Source{GoTemplate: true, Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  x: " + bomb.template + "\n"}}, nil)
			checkLimitError(t, err, append([]string{`service "web": inline manifests`}, bomb.want...))
		})
	}
	for _, bomb := range bombs[:3] {
		t.Run("values/"+bomb.name, func(t *testing.T) {
			_, err := render.Render(limitCtx(t), render.Request{Service: "web", Limits: noTimeout,
				ServiceValues: "x: " + bomb.template + "\n", Source: render.Source{Inline: "a: b"}}, nil)
			checkLimitError(t, err, append([]string{"service values"}, bomb.want...))
		})
		t.Run("kustomize/"+bomb.name, func(t *testing.T) {
			_, err := render.Render(limitCtx(t), render.Request{Service: "web", Limits: noTimeout, Source: render.Source{GoTemplate: true,
				Kustomize: &render.Kustomize{Files: map[string][]byte{
					"kustomization.yaml": []byte("resources: [cm.yaml]\n"),
					"cm.yaml":            []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  x: " + bomb.template + "\n"),
				}}}}, nil)
			checkLimitError(t, err, append([]string{"kustomize file cm.yaml"}, bomb.want...))
		})
	}
}

// TestRenderLimitsDefaults: with the default limits, the nested loops stop on
// the step limit in a second or two, or, on a machine slow enough (the race
// detector), on the default timeout.
func TestRenderLimitsDefaults(t *testing.T) {
	_, err := render.Render(limitCtx(t), render.Request{Service: "web", Source: render.Source{GoTemplate: true,
		Inline: `{{ range until 10000 }}{{ range until 10000 }}{{ range until 10000 }}{{ end }}{{ end }}{{ end }}{{/* s3cr3t-marker */}}`}}, nil)
	checkLimitError(t, err, []string{"inline manifests: stopped at line 1"})
	if msg := err.Error(); !strings.Contains(msg, "more than 1000000 loop iterations") && !strings.Contains(msg, "longer than 10s") {
		t.Errorf("error %q is not about the step limit or the timeout", msg)
	}
}

func TestRenderLimitsSettings(t *testing.T) {
	cm := func(name string) string {
		return "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n"
	}
	tests := []struct {
		name   string
		limits render.Limits
		source render.Source
		want   []string
	}{
		{name: "timeout", limits: render.Limits{Timeout: 200 * time.Millisecond, MaxSteps: 1 << 40},
			source: render.Source{GoTemplate: true, Inline: `{{ range 1000000000000 }}{{ end }}`},
			want:   []string{"rendering took longer than 200ms"}},
		{name: "objects", limits: render.Limits{MaxObjects: 2},
			source: render.Source{Inline: cm("a") + cm("b") + cm("c")},
			want:   []string{"more than 2 objects"}},
		{name: "objects from several documents", limits: render.Limits{MaxObjects: 2},
			source: render.Source{Documents: []render.Document{{Origin: "d1", Content: []byte(cm("a") + cm("b"))}, {Origin: "d2", Content: []byte(cm("c"))}}},
			want:   []string{"d2: ", "more than 2 objects"}},
		{name: "output", limits: render.Limits{MaxOutputBytes: 1000},
			source: render.Source{GoTemplate: true, Inline: `{{ range until 100 }}` + cm("n{{ . }}") + `{{ end }}`},
			want:   []string{"wrote more than 1000 bytes"}},
		{name: "steps", limits: render.Limits{MaxSteps: 10},
			source: render.Source{GoTemplate: true, Inline: `{{ range until 11 }}{{ end }}`},
			want:   []string{"more than 10 loop iterations"}},
		{name: "kustomize output", limits: render.Limits{MaxOutputBytes: 100},
			source: render.Source{Kustomize: &render.Kustomize{Files: map[string][]byte{
				"kustomization.yaml": []byte("resources: [cm.yaml]\n"), "cm.yaml": []byte(cm("a") + "data: {k: " + strings.Repeat("v", 200) + "}\n"),
			}}},
			want: []string{"kustomize overlay .", "kustomize built more than 100 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render.Render(limitCtx(t), render.Request{Service: "web", Limits: tt.limits, Source: tt.source}, nil)
			checkLimitError(t, err, tt.want)
		})
	}
}

// TestRenderWithinLimits: templates that loop, generate and print a lot but
// stay within the limits render as before.
func TestRenderWithinLimits(t *testing.T) {
	res, err := render.Render(limitCtx(t), render.Request{Service: "web", Source: render.Source{GoTemplate: true, Inline: `
{{- range $i := until 2000 }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{{ $i }}
data:
  seq: {{ seq 1 100 | quote }}
  text: {{ repeat 100 "ab" | quote }}
  list: {{ until 50 | toJson | quote }}
{{- end }}
`}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Objects) != 2000 {
		t.Errorf("rendered %d objects, want 2000", len(res.Objects))
	}
}

// bombChart renders the bomb its values name, through Helm's engine.
func bombChart(t *testing.T) []byte {
	t.Helper()
	var b strings.Builder
	for _, bomb := range bombs {
		if strings.Contains(bomb.template, "define") {
			continue // a define cannot be inside an if; see "include recursion"
		}
		b.WriteString(`{{- if eq .Values.bomb "` + bomb.name + `" }}` + bomb.template + "{{ end }}\n")
	}
	tgz, err := chartserver.Package(map[string][]byte{
		"Chart.yaml": []byte("apiVersion: v2\nname: bomb\nversion: 1.0.0\n"),
		// Values given to Render are Go templates themselves: the texts for
		// tpl are the chart's.
		"values.yaml": []byte(`bomb: none
texts:
  nested: '{{ $l := until 10000 }}{{ range $l }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}{{ end }}'
  repeat: '{{ repeat 1000000000 "s3cr3t-marker" }}'
  define: '{{ define "t" }}{{ range until 10000 }}{{ range until 10000 }}{{ end }}{{ end }}{{ end }}{{ template "t" }}'
`),
		"templates/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n"),
		"templates/bomb.yaml": []byte(b.String() +
			`{{- if eq .Values.bomb "tpl" }}{{ tpl (index .Values.texts .Values.text) . }}{{ end }}
{{- if eq .Values.bomb "include" }}{{ include "bomb.r" 0 }}{{ end }}
{{- if eq .Values.bomb "randAlphaNum" }}{{ randAlphaNum 1000000000 }}{{ end }}
{{- if eq .Values.bomb "toJson" }}{{ $s := repeat 1000000 "s" }}{{ $l := list }}{{ range until 100 }}{{ $l = append $l $s }}{{ end }}{{ $l | toJson }}{{ end }}
`),
		"templates/_helpers.tpl": []byte(`{{ define "bomb.r" }}{{ if lt . 40 }}{{ include "bomb.r" (add . 1) }}{{ include "bomb.r" (add . 1) }}{{ end }}{{ end }}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	return tgz
}

func TestRenderLimitsHelm(t *testing.T) {
	repo, _ := servers(t, bombChart(t))
	charts := chartsource.New(chartsource.Options{})
	type helmCase struct {
		name, values string
		limits       render.Limits
		want         []string
	}
	var tests []helmCase
	for _, bomb := range bombs {
		if !strings.Contains(bomb.template, "define") {
			tests = append(tests, helmCase{name: bomb.name, values: "bomb: " + bomb.name + "\n", limits: noTimeout, want: bomb.want})
		}
	}
	tests = append(tests,
		helmCase{name: "tpl with nested loops", limits: noTimeout, values: "bomb: tpl\ntext: nested\n",
			want: []string{"more than 100000 loop iterations"}},
		helmCase{name: "tpl with a repeat", limits: noTimeout, values: "bomb: tpl\ntext: repeat\n",
			want: []string{"repeat would return more than 1 MiB"}},
		helmCase{name: "tpl with a define", limits: noTimeout, values: "bomb: tpl\ntext: define\n",
			want: []string{"more than 100000 loop iterations"}},
		helmCase{name: "include recursion", limits: noTimeout, values: "bomb: include\n", want: []string{"more than 100000 loop iterations"}},
		helmCase{name: "randAlphaNum", limits: noTimeout, values: "bomb: randAlphaNum\n", want: []string{"randAlphaNum would return more than 1 MiB"}},
		helmCase{name: "toJson piped", limits: noTimeout, values: "bomb: toJson\n", want: []string{"toJson would return more than 1 MiB"}},
		helmCase{name: "timeout", limits: render.Limits{Timeout: 300 * time.Millisecond, MaxSteps: 1 << 40},
			values: "bomb: range over a number\n", want: []string{"rendering took longer than 300ms"}},
		helmCase{name: "manifest size", limits: render.Limits{MaxOutputBytes: 20}, values: "bomb: none\n", want: []string{"more than 20 bytes"}},
		helmCase{name: "within the object limit", limits: render.Limits{MaxObjects: 1}, values: "bomb: none\n"},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := render.Render(limitCtx(t), render.Request{Service: "svc", ServiceValues: tt.values, Limits: tt.limits,
				Source: render.Source{Helm: &render.Helm{RepoURL: repo.URL(), Chart: "bomb", Version: "1.0.0"}}}, charts)
			if tt.want == nil {
				if err != nil || len(res.Objects) != 1 {
					t.Fatalf("Render = %v, %v; want the chart's one object", res, err)
				}
				return
			}
			checkLimitError(t, err, append([]string{"chart bomb 1.0.0"}, tt.want...))
		})
	}
}

package render_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"holdfast.dev/holdfast/internal/render"
)

const overrideSource = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: "web:{{ .Values.tag }}"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {mode: standard}
`

func overrideRequest(overrides ...render.Override) render.Request {
	return render.Request{Service: "web", Cluster: testCluster,
		TemplateValues: "replicas: 2\ntag: '1.0'\n", ServiceValues: "tag: '1.1'\n",
		Source:    render.Source{Inline: overrideSource, GoTemplate: true},
		Overrides: overrides}
}

// TestOverridesValuesAndPatches: an override's values are merged over the service's before the
// render, and its patches (strategic merge naming its object, JSON 6902 with a target) applied
// after it, in order; later overrides win.
func TestOverridesValuesAndPatches(t *testing.T) {
	res, err := render.Render(context.Background(), overrideRequest(
		render.Override{Name: "bigger", Values: "replicas: 5\n"},
		render.Override{Name: "eu", Values: "tag: 'eu-{{ .Cluster.Labels.region }}'\n", Patches: []render.Patch{
			{Patch: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {mode: strict, region: eu}\n"},
			{Patch: `[{"op": "add", "path": "/metadata/annotations", "value": {"example.com/zone": "a"}}]`,
				Target: &render.PatchTarget{Kind: "Deployment", Name: "web"}},
		}},
		render.Override{Name: "last", Patches: []render.Patch{
			{Patch: "- {op: replace, path: /data/mode, value: final}\n", Target: &render.PatchTarget{Kind: "ConfigMap"}},
		}},
	), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := refs(res.Objects); strings.Join(got, ",") != "apps/v1 Deployment shop/web,v1 ConfigMap shop/settings" {
		t.Fatalf("objects %v", got)
	}
	dep, cm := res.Objects[0], res.Objects[1]
	if got := field(t, dep, "spec", "replicas"); got != int64(5) {
		t.Errorf("replicas %v (%T), want 5 from the override's values", got, got)
	}
	containers := field(t, dep, "spec", "template", "spec", "containers").([]any)
	if got := containers[0].(map[string]any)["image"]; got != "web:eu-eu-west" {
		t.Errorf("image %v, want the override's tag", got)
	}
	if got := dep.GetAnnotations()["example.com/zone"]; got != "a" {
		t.Errorf("the JSON 6902 patch's annotation: %q", got)
	}
	if got := field(t, cm, "data", "mode"); got != "final" {
		t.Errorf("mode %v, want the last override's", got)
	}
	if got := field(t, cm, "data", "region"); got != "eu" {
		t.Errorf("region %v, from the strategic-merge patch", got)
	}

	plain, err := render.Render(context.Background(), overrideRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Digest == res.Digest {
		t.Error("overrides did not change the rendering's digest")
	}
}

// TestBrokenOverridesFailNamingThem: an override whose values are not a map, whose patch does
// not apply, or whose target selects nothing fails the render with a reason naming the
// override (and the patch), never silently.
func TestBrokenOverridesFailNamingThem(t *testing.T) {
	for _, tc := range []struct {
		name     string
		override render.Override
		reason   string
		want     []string
	}{
		{name: "values not a map", override: render.Override{Name: "bad-values", Values: "- a\n- b\n"},
			reason: render.ReasonInvalidValues, want: []string{`override "bad-values" values`, "YAML map"}},
		{name: "target selects nothing", override: render.Override{Name: "nothing", Patches: []render.Patch{
			{Patch: "- {op: add, path: /data/x, value: y}\n", Target: &render.PatchTarget{Kind: "Secret"}}}},
			reason: render.ReasonOverrideFailed, want: []string{`override "nothing"`, "patch 1", "kind=Secret", "selects none"}},
		{name: "patch names a missing object", override: render.Override{Name: "missing", Patches: []render.Patch{
			{Patch: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: absent, namespace: shop}\ndata: {a: b}\n"}}},
			reason: render.ReasonOverrideFailed, want: []string{`override "missing"`, "absent"}},
		{name: "operation that does not apply", override: render.Override{Name: "bad-op", Patches: []render.Patch{
			{Patch: "- {op: replace, path: /spec/nothing/here, value: 1}\n", Target: &render.PatchTarget{Kind: "Deployment"}}}},
			reason: render.ReasonOverrideFailed, want: []string{`override "bad-op"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render.Render(context.Background(), overrideRequest(tc.override), nil)
			var re *render.Error
			if !errors.As(err, &re) {
				t.Fatalf("error %v (%T), want a *render.Error", err, err)
			}
			if re.Reason != tc.reason {
				t.Errorf("reason %q, want %q (%v)", re.Reason, tc.reason, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

package render_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"holdfast.dev/holdfast/internal/render"
)

func kustomizeFiles() map[string][]byte {
	return map[string][]byte{
		"base/kustomization.yaml": []byte(`resources:
- deployment.yaml
- service.yaml
`),
		"base/deployment.yaml": []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`),
		"base/service.yaml": []byte(`apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80}]
`),
		"overlays/prod/kustomization.yaml": []byte(`resources:
- ../../base
namePrefix: prod-
namespace: shop
commonLabels:
  env: prod
configMapGenerator:
- name: web-config
  literals:
  - cluster={{ .Cluster.Name }}
  files:
  - settings.properties
patches:
- path: replicas.yaml
`),
		"overlays/prod/settings.properties": []byte("color=blue\n"),
		"overlays/prod/replicas.yaml": []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 5
`),
	}
}

func TestRenderKustomize(t *testing.T) {
	for _, goTemplate := range []bool{false, true} {
		res, err := render.Render(context.Background(), render.Request{
			Service: "shop",
			Cluster: testCluster,
			Source:  render.Source{GoTemplate: goTemplate, Kustomize: &render.Kustomize{Files: kustomizeFiles(), Path: "overlays/prod"}},
		}, nil)
		if err != nil {
			t.Fatalf("Render: %v", err)
		}
		got := refs(res.Objects)
		// Kustomize's build order: resources as declared, then generated objects.
		if len(got) != 3 || got[0] != "apps/v1 Deployment shop/prod-web" || got[1] != "v1 Service shop/prod-web" || !strings.HasPrefix(got[2], "v1 ConfigMap shop/prod-web-config-") {
			t.Fatalf("objects = %q", got)
		}
		dep, svc, cm := res.Objects[0], res.Objects[1], res.Objects[2]
		if dep.GetLabels()["env"] != "prod" || svc.GetLabels()["env"] != "prod" {
			t.Errorf("commonLabels not applied: %v %v", dep.GetLabels(), svc.GetLabels())
		}
		if r := field(t, dep, "spec", "replicas"); r != int64(5) {
			t.Errorf("replicas = %v, want 5 from the patch", r)
		}
		data := field(t, cm, "data").(map[string]any)
		if data["settings.properties"] != "color=blue\n" {
			t.Errorf("configMapGenerator data = %v", data)
		}
		wantCluster := "{{ .Cluster.Name }}"
		if goTemplate {
			wantCluster = "prod-eu-1"
		}
		if data["cluster"] != wantCluster {
			t.Errorf("GoTemplate=%v: cluster = %v, want %v", goTemplate, data["cluster"], wantCluster)
		}
		// The generated name's hash suffix is referenced from the Deployment
		// only if kustomize rewrote references; it must at least be stable.
		again, err := render.Render(context.Background(), render.Request{Service: "shop", Cluster: testCluster,
			Source: render.Source{GoTemplate: goTemplate, Kustomize: &render.Kustomize{Files: kustomizeFiles(), Path: "overlays/prod"}}}, nil)
		if err != nil || again.Digest != res.Digest {
			t.Errorf("second render: digest %s vs %s, err %v", again.Digest, res.Digest, err)
		}
	}
}

func TestRenderKustomizeErrors(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string][]byte
		path   string
		reason string
		want   []string
	}{
		{name: "remote base refused",
			files:  map[string][]byte{"kustomization.yaml": []byte("resources:\n- github.com/example/repo//base?ref=v1\n")},
			reason: render.ReasonKustomizeFailed, want: []string{"kustomize overlay . (kustomization.yaml)", "not among the overlay's files", "remote"}},
		{name: "remote patch URL refused",
			files:  map[string][]byte{"kustomization.yaml": []byte("patches:\n- path: https://example.com/patch.yaml\n")},
			reason: render.ReasonKustomizeFailed, want: []string{"not among the overlay's files", "remote files are not supported"}},
		{name: "remote base in the deprecated bases refused",
			files:  map[string][]byte{"kustomization.yaml": []byte("bases:\n- github.com/example/repo//base?ref=v1\n")},
			reason: render.ReasonKustomizeFailed, want: []string{"kustomize overlay . (kustomization.yaml)", "not among the overlay's files", "remote"}},
		{name: "remote patch URL in the deprecated patchesJson6902 refused",
			files:  map[string][]byte{"kustomization.yaml": []byte("patchesJson6902:\n- target: {kind: ConfigMap, name: c}\n  path: https://example.com/patch.yaml\n")},
			reason: render.ReasonKustomizeFailed, want: []string{`"https://example.com/patch.yaml" is not among the overlay's files`}},
		{name: "remote patch URL in the deprecated patchesStrategicMerge refused",
			files:  map[string][]byte{"kustomization.yaml": []byte("patchesStrategicMerge:\n- https://example.com/smp.yaml\n")},
			reason: render.ReasonKustomizeFailed, want: []string{`"https://example.com/smp.yaml" is not among the overlay's files`}},
		{name: "git address in a generator refused",
			files:  map[string][]byte{"kustomization.yaml": []byte("generators:\n- git@github.com:example/repo.git\n")},
			reason: render.ReasonKustomizeFailed, want: []string{`"git@github.com:example/repo.git" is not among the overlay's files`}},
		{name: "remote repository in a transformer refused",
			files:  map[string][]byte{"kustomization.yaml": []byte("transformers:\n- github.com/example/repo//transformers?ref=v1\n")},
			reason: render.ReasonKustomizeFailed, want: []string{"github.com/example/repo//transformers", "not among the overlay's files"}},
		{name: "remote repository in a validator refused",
			files:  map[string][]byte{"kustomization.yaml": []byte("validators:\n- ssh://git@example.com/repo.git//v\n")},
			reason: render.ReasonKustomizeFailed, want: []string{"not among the overlay's files"}},
		{name: "generator file source outside the files refused",
			files:  map[string][]byte{"kustomization.yaml": []byte("configMapGenerator:\n- name: g\n  files: [key=github.com/example/repo//f]\n")},
			reason: render.ReasonKustomizeFailed, want: []string{"not among the overlay's files"}},
		{name: "kustomization that does not parse refused",
			files:  map[string][]byte{"kustomization.yaml": []byte("resources: {not: [a list\n")},
			reason: render.ReasonKustomizeFailed, want: []string{"is not a valid kustomization"}},
		{name: "helm charts refused",
			files:  map[string][]byte{"kustomization.yaml": []byte("helmCharts:\n- name: x\n  repo: https://example.com\n")},
			reason: render.ReasonKustomizeFailed, want: []string{"helmCharts are not supported"}},
		{name: "missing resource file",
			files:  map[string][]byte{"app/kustomization.yaml": []byte("resources:\n- nope.yaml\n")},
			path:   "app",
			reason: render.ReasonKustomizeFailed, want: []string{"kustomize overlay app (app/kustomization.yaml)", `"nope.yaml"`}},
		{name: "kustomize error",
			files: map[string][]byte{"kustomization.yaml": []byte("resources:\n- cm.yaml\npatches:\n- target: {kind: ConfigMap}\n  patch: '[{\"op\": \"replace\", \"path\": \"/data/nope\", \"value\": 1}]'\n"),
				"cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")},
			reason: render.ReasonKustomizeFailed, want: []string{"kustomize build failed"}},
		{name: "no kustomization",
			files:  map[string][]byte{"cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")},
			reason: render.ReasonKustomizeFailed, want: []string{"kustomize overlay .", "kustomization"}},
		{name: "file outside the root",
			files:  map[string][]byte{"../x.yaml": []byte("a: b")},
			reason: render.ReasonInvalidSource, want: []string{`"../x.yaml" is not a relative path`}},
		{name: "object without name",
			files: map[string][]byte{"kustomization.yaml": []byte("resources:\n- cm.yaml\n"),
				"cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: c-}\n")},
			reason: render.ReasonKustomizeFailed, want: []string{"kustomize"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render.Render(context.Background(), render.Request{Service: "shop",
				Source: render.Source{Kustomize: &render.Kustomize{Files: tt.files, Path: tt.path}}}, nil)
			var re *render.Error
			if !errors.As(err, &re) {
				t.Fatalf("error = %v, want a *render.Error", err)
			}
			if re.Reason != tt.reason {
				t.Errorf("reason = %s, want %s: %v", re.Reason, tt.reason, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

package templatesource_test

import (
	"reflect"
	"testing"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/templatesource"
)

// The format of an artifact's files is the one asked for, or detected at the path.
func TestArtifactSource(t *testing.T) {
	files := map[string][]byte{
		"README.md":                        []byte("docs"),
		"apps/b.yaml":                      []byte("kind: B"),
		"apps/a.json":                      []byte(`{"kind": "A"}`),
		"apps/sub/c.yml":                   []byte("kind: C"),
		"base/kustomization.yaml":          []byte("resources: [cm.yaml]"),
		"base/cm.yaml":                     []byte("kind: ConfigMap"),
		"overlays/prod/kustomization.yaml": []byte("resources: [../../base]"),
		"charts/web/Chart.yaml":            []byte("name: web"),
	}
	art := func(p string) render.Artifact {
		return render.Artifact{URL: "http://src/x.tar.gz", Digest: "sha256:ab", Path: p}
	}
	origin := func(f string) string { return `artifact http://src/x.tar.gz@sha256:ab file "` + f + `"` }
	for _, tt := range []struct {
		name   string
		spec   holdfastv1.ArtifactSource
		want   render.Source
		reason string
	}{
		{name: "manifests under the path, in path order", spec: holdfastv1.ArtifactSource{Path: "apps"},
			want: render.Source{Documents: []render.Document{
				{Origin: origin("apps/a.json"), Content: files["apps/a.json"]},
				{Origin: origin("apps/b.yaml"), Content: files["apps/b.yaml"]},
				{Origin: origin("apps/sub/c.yml"), Content: files["apps/sub/c.yml"]},
			}}},
		{name: "a kustomization is built from every file", spec: holdfastv1.ArtifactSource{Path: "overlays/prod"},
			want: render.Source{Kustomize: &render.Kustomize{Files: files, Path: "overlays/prod"}}},
		{name: "a Chart.yaml is a chart", spec: holdfastv1.ArtifactSource{Path: "charts/web", ReleaseName: "w"},
			want: render.Source{Helm: &render.Helm{Artifact: ptr(art("charts/web")), ReleaseName: "w", IncludeCRDs: true}}},
		{name: "no files at the path", spec: holdfastv1.ArtifactSource{Path: "nothing"}, reason: render.ReasonInvalidArtifact},
		{name: "format Helm without a chart", spec: holdfastv1.ArtifactSource{Path: "apps", Format: holdfastv1.ArtifactHelm}, reason: render.ReasonInvalidArtifact},
		{name: "format Manifests overrides detection", spec: holdfastv1.ArtifactSource{Path: "charts/web", Format: holdfastv1.ArtifactManifests},
			want: render.Source{Documents: []render.Document{{Origin: origin("charts/web/Chart.yaml"), Content: files["charts/web/Chart.yaml"]}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := templatesource.ArtifactSource(art(tt.spec.Path), &tt.spec, files, nil)
			if tt.reason != "" {
				if render.ReasonOf(err) != tt.reason {
					t.Fatalf("error %v, want reason %s", err, tt.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ArtifactSource =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

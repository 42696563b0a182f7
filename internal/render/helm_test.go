package render_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"holdfast.dev/holdfast/internal/chartserver"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/render/chartsource"
)

// servers starts an HTTP chart repository and an OCI registry, both serving
// the hello chart in versions 0.1.0, 0.2.0, 1.0.0 and 1.1.0-rc.1, plus the
// extra charts given.
func servers(t *testing.T, extra ...[]byte) (*chartserver.Repo, *chartserver.Registry) {
	t.Helper()
	repo := chartserver.NewRepo()
	t.Cleanup(repo.Close)
	reg, err := chartserver.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	var charts [][]byte
	for _, v := range []string{"0.1.0", "0.2.0", "1.0.0", "1.1.0-rc.1"} {
		tgz, err := chartserver.Hello(v)
		if err != nil {
			t.Fatal(err)
		}
		charts = append(charts, tgz)
	}
	for _, tgz := range append(charts, extra...) {
		if err := repo.Add(tgz); err != nil {
			t.Fatal(err)
		}
		if _, err := reg.Push(tgz); err != nil {
			t.Fatal(err)
		}
	}
	return repo, reg
}

func TestRenderHelm(t *testing.T) {
	repo, reg := servers(t)
	charts := chartsource.New(chartsource.Options{})
	for _, src := range []struct {
		name string
		helm render.Helm
	}{
		{"http", render.Helm{RepoURL: repo.URL()}},
		{"oci", render.Helm{RepoURL: reg.URL(), PlainHTTP: true}},
	} {
		for _, v := range []struct{ version, want string }{
			{"0.1.0", "0.1.0"},
			{"0.x", "0.2.0"},
			{"~0.1", "0.1.0"},
			{"", "1.0.0"}, // latest stable: 1.1.0-rc.1 is a prerelease
			{">=1.1.0-0", "1.1.0-rc.1"},
		} {
			t.Run(src.name+" "+v.version, func(t *testing.T) {
				h := src.helm
				h.Chart, h.Version, h.IncludeCRDs = "hello", v.version, true
				res, err := render.Render(context.Background(), render.Request{
					Service:         "greeter",
					Cluster:         testCluster,
					TargetNamespace: "apps",
					TemplateValues:  "message: hello from {{ .Cluster.Name }}\nreplicaCount: 1\n",
					ServiceValues:   "message: hello {{ .Cluster.Labels.region }}\nreplicaCount: {{ if eq .Cluster.Labels.tier \"gold\" }}3{{ else }}1{{ end }}\n",
					Source:          render.Source{Helm: &h},
				}, charts)
				if err != nil {
					t.Fatalf("Render: %v", err)
				}
				if res.ChartVersion != v.want {
					t.Errorf("chart version = %s, want %s", res.ChartVersion, v.want)
				}
				// Helm's install order: ConfigMap, Service, Deployment.
				want := []string{"v1 ConfigMap apps/greeter-hello", "v1 Service apps/greeter-hello", "apps/v1 Deployment apps/greeter-hello"}
				if got := refs(res.Objects); strings.Join(got, "|") != strings.Join(want, "|") {
					t.Fatalf("objects = %q, want %q", got, want)
				}
				if msg := field(t, res.Objects[0], "data", "message"); msg != "hello eu-west" {
					t.Errorf("message = %v, want the cluster's region label through values", msg)
				}
				if r := field(t, res.Objects[2], "spec", "replicas"); r != int64(3) {
					t.Errorf("replicas = %#v, want 3", r)
				}
				if l := res.Objects[2].GetLabels()["helm.sh/chart"]; l != "hello-"+v.want {
					t.Errorf("chart label = %q", l)
				}
			})
		}
	}
}

// hooksChart has a CRD, a pre-install hook, a post-install hook with a lower
// weight listed second, and a test hook.
func hooksChart(t *testing.T) []byte {
	t.Helper()
	tgz, err := chartserver.Package(map[string][]byte{
		"Chart.yaml":  []byte("apiVersion: v2\nname: hooks\nversion: 1.0.0\n"),
		"values.yaml": []byte("name: demo\n"),
		"crds/widgets.yaml": []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`),
		"templates/widget.yaml": []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: {{ .Values.name }}\n"),
		"templates/ns.yaml":     []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{ .Release.Namespace }}\n"),
		"templates/pre.yaml": []byte(`apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {"helm.sh/hook": pre-install}
spec: {template: {spec: {restartPolicy: Never, containers: [{name: m, image: busybox}]}}}
`),
		"templates/post.yaml": []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: post-b
  annotations: {"helm.sh/hook": post-install, "helm.sh/hook-weight": "5"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: post-a
  annotations: {"helm.sh/hook": "post-install,post-upgrade", "helm.sh/hook-weight": "-1"}
`),
		"templates/test.yaml": []byte(`apiVersion: v1
kind: Pod
metadata:
  name: smoke
  annotations: {"helm.sh/hook": test}
spec: {containers: [{name: t, image: busybox}]}
`),
		"templates/upgrade.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: upgrade-only\n  annotations: {\"helm.sh/hook\": pre-upgrade}\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return tgz
}

func TestRenderHelmHooksAndCRDs(t *testing.T) {
	repo, _ := servers(t, hooksChart(t))
	charts := chartsource.New(chartsource.Options{})
	for _, includeCRDs := range []bool{true, false} {
		res, err := render.Render(context.Background(), render.Request{Service: "hooks", TargetNamespace: "demo",
			Source: render.Source{Helm: &render.Helm{RepoURL: repo.URL(), Chart: "hooks", Version: "1.0.0", IncludeCRDs: includeCRDs}}}, charts)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"batch/v1 Job migrate",
			"apiextensions.k8s.io/v1 CustomResourceDefinition widgets.example.com",
			"v1 Namespace demo",
			"example.com/v1 Widget demo",
			"v1 ConfigMap post-a",
			"v1 ConfigMap post-b",
		}
		if !includeCRDs {
			want = append(want[:1], want[2:]...)
		}
		if got := refs(res.Objects); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("IncludeCRDs=%v: objects = %q, want %q", includeCRDs, got, want)
		}
	}
}

func TestRenderHelmErrors(t *testing.T) {
	badTemplate, err := chartserver.Package(map[string][]byte{
		"Chart.yaml":            []byte("apiVersion: v2\nname: strict\nversion: 1.0.0\n"),
		"templates/cm.yaml":     []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ required \"values.name is required\" .Values.name }}\n"),
		"templates/bad.yaml":    []byte("{{ if .Values.broken }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   oops: 1\n{{ end }}\n"),
		"templates/noname.yaml": []byte("{{ if .Values.noname }}\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n{{ end }}\n"),
		"templates/dup.yaml":    []byte("{{ if .Values.dup }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n{{ end }}\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	repo, reg := servers(t, badTemplate)
	closed := chartserver.NewRepo()
	closed.Close()
	charts := chartsource.New(chartsource.Options{})

	tests := []struct {
		name      string
		helm      render.Helm
		values    string
		kube      string
		reason    string
		transient bool
		want      []string
	}{
		{name: "wrong value type (schema)", helm: render.Helm{RepoURL: repo.URL(), Chart: "hello", Version: "1.0.0"},
			values: "replicaCount: three\n", reason: render.ReasonInvalidValues,
			want: []string{`service "svc": chart hello 1.0.0`, "values.schema.json", "replicaCount"}},
		{name: "template fails on values", helm: render.Helm{RepoURL: repo.URL(), Chart: "strict"},
			reason: render.ReasonInvalidValues, want: []string{"chart strict 1.0.0", "values.name is required", "strict/templates/cm.yaml"}},
		{name: "chart renders invalid YAML", helm: render.Helm{RepoURL: repo.URL(), Chart: "strict"}, values: "name: a\nbroken: true\n",
			reason: render.ReasonInvalidYAML, want: []string{"chart strict 1.0.0", "strict/templates/bad.yaml"}},
		{name: "chart renders an object without name", helm: render.Helm{RepoURL: repo.URL(), Chart: "strict"}, values: "name: a\nnoname: true\n",
			reason: render.ReasonMissingKindOrName, want: []string{"chart strict 1.0.0, template strict/templates/noname.yaml", "no metadata.name"}},
		{name: "chart renders a duplicate", helm: render.Helm{RepoURL: repo.URL(), Chart: "strict"}, values: "name: a\ndup: true\n",
			reason: render.ReasonDuplicateObject, want: []string{"v1 ConfigMap a", "strict/templates/cm.yaml", "strict/templates/dup.yaml"}},
		{name: "http chart not found", helm: render.Helm{RepoURL: repo.URL(), Chart: "nope"},
			reason: render.ReasonChartNotFound, want: []string{"chart nope latest from " + repo.URL(), `no chart named "nope"`}},
		{name: "http version not found lists versions", helm: render.Helm{RepoURL: repo.URL(), Chart: "hello", Version: "2.x"},
			reason: render.ReasonChartNotFound, want: []string{`no version of chart "hello" matches "2.x"`, "1.1.0-rc.1, 1.0.0, 0.2.0, 0.1.0"}},
		{name: "http exact version not found", helm: render.Helm{RepoURL: repo.URL(), Chart: "hello", Version: "0.3.0"},
			reason: render.ReasonChartNotFound, want: []string{`matches "0.3.0"`, "available versions"}},
		{name: "http repository path wrong", helm: render.Helm{RepoURL: repo.URL() + "/nothing-here", Chart: "hello"},
			reason: render.ReasonChartNotFound, want: []string{"HTTP 404", "index.yaml"}},
		{name: "oci chart not found", helm: render.Helm{RepoURL: reg.URL(), Chart: "nope", PlainHTTP: true},
			reason: render.ReasonChartNotFound, want: []string{"chart nope latest from " + reg.URL()}},
		{name: "oci exact version not found", helm: render.Helm{RepoURL: reg.URL(), Chart: "hello", Version: "0.3.0", PlainHTTP: true},
			reason: render.ReasonChartNotFound, want: []string{"version 0.3.0"}},
		{name: "oci range not matched lists versions", helm: render.Helm{RepoURL: reg.URL(), Chart: "hello", Version: "^3", PlainHTTP: true},
			reason: render.ReasonChartNotFound, want: []string{"available versions: 1.1.0-rc.1, 1.0.0"}},
		{name: "repository unreachable", helm: render.Helm{RepoURL: closed.URL(), Chart: "hello"},
			reason: render.ReasonChartFetchFailed, transient: true, want: []string{"fetching the index.yaml failed"}},
		{name: "credentials in URL refused", helm: render.Helm{RepoURL: "https://user:pa55word@example.invalid", Chart: "hello"},
			reason: render.ReasonInvalidSource, want: []string{"contains credentials"}},
		{name: "unsupported scheme", helm: render.Helm{RepoURL: "ftp://example.invalid", Chart: "hello"},
			reason: render.ReasonInvalidSource, want: []string{`scheme "ftp"`}},
		{name: "chart without repository", helm: render.Helm{Chart: "hello"},
			reason: render.ReasonInvalidSource, want: []string{"repoURL"}},
		{name: "invalid release name", helm: render.Helm{RepoURL: repo.URL(), Chart: "hello", ReleaseName: "Not_Valid"},
			reason: render.ReasonInvalidSource, want: []string{`release name "Not_Valid"`}},
		{name: "invalid kube version", helm: render.Helm{RepoURL: repo.URL(), Chart: "hello"}, kube: "banana",
			reason: render.ReasonInvalidSource, want: []string{`Kubernetes version "banana"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.helm
			_, err := render.Render(context.Background(), render.Request{Service: "svc", ServiceValues: tt.values, KubeVersion: tt.kube,
				Source: render.Source{Helm: &h}}, charts)
			var re *render.Error
			if !errors.As(err, &re) {
				t.Fatalf("error = %v, want a *render.Error", err)
			}
			if re.Reason != tt.reason {
				t.Errorf("reason = %s, want %s: %v", re.Reason, tt.reason, err)
			}
			if render.Transient(err) != tt.transient {
				t.Errorf("Transient = %v, want %v", !tt.transient, tt.transient)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "pa55word") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error leaks a password or spans lines: %q", err)
			}
		})
	}
}

func TestRenderHelmKubeVersion(t *testing.T) {
	tgz, err := chartserver.Package(map[string][]byte{
		"Chart.yaml":        []byte("apiVersion: v2\nname: kv\nversion: 1.0.0\nkubeVersion: \">=1.30.0-0\"\n"),
		"templates/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kv\ndata:\n  minor: {{ .Capabilities.KubeVersion.Minor | quote }}\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := servers(t, tgz)
	charts := chartsource.New(chartsource.Options{})
	req := render.Request{Service: "kv", Source: render.Source{Helm: &render.Helm{RepoURL: repo.URL(), Chart: "kv"}}}
	res, err := render.Render(context.Background(), req, charts)
	if err != nil {
		t.Fatal(err)
	}
	if m := field(t, res.Objects[0], "data", "minor"); m != "36" {
		t.Errorf("default minor = %v, want 36", m)
	}
	req.KubeVersion = "v1.31.4-eks.1"
	if res, err = render.Render(context.Background(), req, charts); err != nil {
		t.Fatal(err)
	}
	if m := field(t, res.Objects[0], "data", "minor"); m != "31" {
		t.Errorf("minor = %v, want 31", m)
	}
	req.KubeVersion = "v1.29.0"
	_, err = render.Render(context.Background(), req, charts)
	if render.ReasonOf(err) != render.ReasonInvalidSource || !strings.Contains(fmtErr(err), "kubeVersion") {
		t.Errorf("old cluster: err = %v, want InvalidSource about kubeVersion", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

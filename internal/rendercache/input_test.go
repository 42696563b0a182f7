package rendercache_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"holdfast.dev/holdfast/internal/chartserver"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/rendercache"
)

// loadChart packages files (over the generated chart's) and loads the archive, as a chart
// source does.
func loadChart(t *testing.T, change func(files map[string][]byte)) *chart.Chart {
	t.Helper()
	tgz, err := chartserver.Generated("1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		ch, err := loader.LoadArchive(bytes.NewReader(tgz))
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, f := range ch.Raw {
			files[f.Name] = f.Data
		}
		change(files)
		if tgz, err = chartserver.Package(files); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := loader.LoadArchive(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func helmRequest() render.Request {
	return render.Request{
		Service:         "db",
		Cluster:         render.Cluster{Name: "c1", Namespace: "fleet", Labels: map[string]string{"env": "dev", "region": "eu"}, Annotations: map[string]string{"a": "1"}},
		TargetNamespace: "apps",
		KubeVersion:     "v1.36.4",
		TemplateValues:  "greeting: hi\n",
		ServiceValues:   "size: 1\n",
		Source: render.Source{Helm: &render.Helm{
			Chart: "generated", Version: "1.x", RepoURL: "https://charts.example", IncludeCRDs: true,
			Username: "u", Password: "p",
		}},
	}
}

// TestInputDigest: the input digest changes with everything a render reads, and with nothing
// else.
func TestInputDigest(t *testing.T) {
	base := loadChart(t, nil)
	digest := func(req render.Request, ch *chart.Chart) string {
		t.Helper()
		d, err := rendercache.InputDigest(req, ch)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	want := digest(helmRequest(), base)
	if again := digest(helmRequest(), loadChart(t, nil)); again != want {
		t.Fatalf("the same inputs gave two digests: %s, then %s", want, again)
	}

	for _, tt := range []struct {
		name    string
		req     func(*render.Request)
		chart   func(files map[string][]byte)
		loaded  func(*chart.Chart)
		changes bool
	}{
		{name: "service name", req: func(r *render.Request) { r.Service = "db2" }, changes: true},
		{name: "target namespace", req: func(r *render.Request) { r.TargetNamespace = "other" }, changes: true},
		{name: "cluster name", req: func(r *render.Request) { r.Cluster.Name = "c2" }, changes: true},
		{name: "cluster namespace", req: func(r *render.Request) { r.Cluster.Namespace = "other" }, changes: true},
		{name: "cluster label", req: func(r *render.Request) { r.Cluster.Labels = map[string]string{"env": "prod", "region": "eu"} }, changes: true},
		{name: "cluster annotation", req: func(r *render.Request) { r.Cluster.Annotations = nil }, changes: true},
		{name: "Kubernetes version", req: func(r *render.Request) { r.KubeVersion = "v1.37.0" }, changes: true},
		{name: "template values", req: func(r *render.Request) { r.TemplateValues = "greeting: ho\n" }, changes: true},
		{name: "service values", req: func(r *render.Request) { r.ServiceValues = "size: 2\n" }, changes: true},
		{name: "release name", req: func(r *render.Request) { r.Source.Helm.ReleaseName = "other" }, changes: true},
		{name: "CRDs left out", req: func(r *render.Request) { r.Source.Helm.IncludeCRDs = false }, changes: true},
		{name: "chart name", req: func(r *render.Request) { r.Source.Helm.Chart = "other" }, changes: true},
		{name: "a template of the chart", chart: func(f map[string][]byte) {
			f["templates/configmap.yaml"] = append(f["templates/configmap.yaml"], "  extra: x\n"...)
		}, changes: true},
		{name: "the chart's default values", chart: func(f map[string][]byte) { f["values.yaml"] = []byte("greeting: other\n") }, changes: true},
		{name: "the chart's version", chart: func(f map[string][]byte) {
			f["Chart.yaml"] = bytes.Replace(f["Chart.yaml"], []byte("version: 1.0.0"), []byte("version: 1.0.1"), 1)
		}, changes: true},
		{name: "a file of the chart", chart: func(f map[string][]byte) { f["files/extra.txt"] = []byte("x") }, changes: true},
		{name: "a subchart", chart: func(f map[string][]byte) {
			f["charts/sub/Chart.yaml"] = []byte("apiVersion: v2\nname: sub\nversion: 0.1.0\n")
		}, changes: true},

		{name: "repository URL (a mirror)", req: func(r *render.Request) { r.Source.Helm.RepoURL = "oci://mirror.example/charts" }},
		{name: "version constraint resolving to the same chart", req: func(r *render.Request) { r.Source.Helm.Version = "1.0.0" }},
		{name: "repository credentials", req: func(r *render.Request) { r.Source.Helm.Username, r.Source.Helm.Password = "v", "q" }},
		{name: "transport settings", req: func(r *render.Request) { r.Source.Helm.InsecureSkipTLSVerify, r.Source.Helm.PlainHTTP = true, true }},
		{name: "modification times in the chart archive", loaded: func(ch *chart.Chart) {
			later := time.Now().Add(time.Hour)
			ch.ModTime = later
			for _, f := range append(ch.Templates, ch.Files...) {
				f.ModTime = later
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, ch := helmRequest(), base
			h := *req.Source.Helm
			req.Source.Helm = &h
			if tt.req != nil {
				tt.req(&req)
			}
			if tt.chart != nil {
				ch = loadChart(t, tt.chart)
			}
			if tt.loaded != nil {
				ch = loadChart(t, nil)
				tt.loaded(ch)
			}
			if got := digest(req, ch); (got != want) != tt.changes {
				t.Errorf("digest changed = %v, want %v", got != want, tt.changes)
			}
		})
	}
}

// TestInputDigestOfOtherSources: without a chart, the digest covers the source's content.
func TestInputDigestOfOtherSources(t *testing.T) {
	for _, tt := range []struct {
		name string
		a, b render.Source
	}{
		{"inline", render.Source{Inline: "a: 1"}, render.Source{Inline: "a: 2"}},
		{"templating", render.Source{Inline: "a: 1"}, render.Source{Inline: "a: 1", GoTemplate: true}},
		{"documents", render.Source{Documents: []render.Document{{Origin: "cm", Content: []byte("a")}}},
			render.Source{Documents: []render.Document{{Origin: "cm", Content: []byte("b")}}}},
		{"kustomize", render.Source{Kustomize: &render.Kustomize{Files: map[string][]byte{"kustomization.yaml": []byte("a")}}},
			render.Source{Kustomize: &render.Kustomize{Files: map[string][]byte{"kustomization.yaml": []byte("b")}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, errA := rendercache.InputDigest(render.Request{Service: "s", Source: tt.a}, nil)
			b, errB := rendercache.InputDigest(render.Request{Service: "s", Source: tt.b}, nil)
			again, _ := rendercache.InputDigest(render.Request{Service: "s", Source: tt.a}, nil)
			if errA != nil || errB != nil || a == b || a != again {
				t.Errorf("digests %s, %s, again %s (errors %v, %v): want two, and the first stable", a, b, again, errA, errB)
			}
		})
	}
}

// A large inline source's digest is kept by the string's identity (inline_digest.go): the same
// content in another string has the same digest, other content of the same length another, and
// a change in its last byte is seen.
func TestInputDigestOfALargeInlineSource(t *testing.T) {
	big := strings.Repeat("apiVersion: v1\nkind: ConfigMap\n---\n", 4096)
	digest := func(inline string) string {
		t.Helper()
		d, err := rendercache.InputDigest(render.Request{Service: "s", Source: render.Source{Inline: inline}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := digest(big)
	copied := string([]byte(big))
	edited := big[:len(big)-1] + "x"
	if again, same := digest(big), digest(copied); again != first || same != first {
		t.Errorf("the same content: %s, again %s, in another string %s; want one digest", first, again, same)
	}
	if other := digest(edited); other == first {
		t.Errorf("a source that differs in its last byte has the same digest %s", other)
	}
	if small := digest(big[:100]); small == first {
		t.Errorf("a prefix of the source has its digest %s", small)
	}
}

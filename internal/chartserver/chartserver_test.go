package chartserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"holdfast.dev/holdfast/internal/chartserver"
)

func TestHelloAndRepo(t *testing.T) {
	tgz, err := chartserver.Hello("2.3.4")
	if err != nil {
		t.Fatal(err)
	}
	md, err := chartserver.Metadata(tgz)
	if err != nil || md.Name != "hello" || md.Version != "2.3.4" {
		t.Fatalf("metadata = %+v, %v", md, err)
	}
	repo := chartserver.NewRepo()
	defer repo.Close()
	if err := repo.Add(tgz); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(repo.URL() + "/index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "charts/hello-2.3.4.tgz") || !strings.Contains(string(body), "digest:") {
		t.Errorf("index.yaml = %s", body)
	}
	if repo.Requests("/index.yaml") != 1 {
		t.Errorf("requests not counted")
	}
}

func TestEmbeddedCharts(t *testing.T) {
	for name, pkg := range map[string]func(string) ([]byte, error){
		chartserver.HelloChartName:     chartserver.Hello,
		chartserver.GeneratedChartName: chartserver.Generated,
	} {
		tgz, err := pkg("1.2.3")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if md, err := chartserver.Metadata(tgz); err != nil || md.Name != name || md.Version != "1.2.3" {
			t.Errorf("%s: metadata = %+v, %v", name, md, err)
		}
	}
}

func TestPackageRejectsInvalidChart(t *testing.T) {
	if _, err := chartserver.Package(map[string][]byte{"templates/a.yaml": []byte("a: b")}); err == nil {
		t.Error("a chart without Chart.yaml was packaged")
	}
}

func TestRegistryPush(t *testing.T) {
	reg, err := chartserver.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	tgz, err := chartserver.Hello("")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := reg.Push(tgz)
	if err != nil {
		t.Fatal(err)
	}
	if want := reg.Host() + "/charts/hello:0.1.0"; ref != want {
		t.Errorf("ref = %s, want %s", ref, want)
	}
	if !strings.HasPrefix(reg.URL(), "oci://127.0.0.1:") {
		t.Errorf("URL = %s", reg.URL())
	}
}

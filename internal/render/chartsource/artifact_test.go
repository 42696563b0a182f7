package chartsource_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/render/chartsource"
)

type entry struct {
	name, content string
	typ           byte
	link          string
}

func archive(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: typ, Linkname: e.link}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.content))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.content)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// serveOnce serves data at every path and counts the requests.
func serveOnce(t *testing.T, data []byte) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// A Flux artifact is downloaded once, checked against its digest and unpacked; a digest that
// does not match is refused naming both, and the verified one is served from the cache.
func TestHTTPArtifact(t *testing.T) {
	data := archive(t, entry{name: "./deploy/app.yaml", content: "kind: ConfigMap"}, entry{name: "deploy/", typ: tar.TypeDir})
	srv, requests := serveOnce(t, data)
	s := chartsource.New(chartsource.Options{})
	a := render.Artifact{URL: srv.URL + "/gitrepository/x.tar.gz", Digest: digestOf(data)}
	for range 2 {
		files, err := s.ArtifactFiles(context.Background(), a)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 1 || string(files["deploy/app.yaml"]) != "kind: ConfigMap" {
			t.Fatalf("files = %v", files)
		}
	}
	if requests.Load() != 1 {
		t.Errorf("%d downloads, want 1: the verified artifact is cached", requests.Load())
	}

	wrong := a
	wrong.Digest = digestOf([]byte("something else"))
	_, err := s.ArtifactFiles(context.Background(), wrong)
	if render.ReasonOf(err) != render.ReasonArtifactDigestMismatch || render.Transient(err) {
		t.Fatalf("error %v (reason %q), want a permanent ArtifactDigestMismatch", err, render.ReasonOf(err))
	}
	if want := "expected " + wrong.Digest + ", got " + a.Digest; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

// What an artifact may hold: regular files inside its root, within the size and count limits.
func TestArtifactArchiveLimits(t *testing.T) {
	for _, tt := range []struct {
		name string
		data func(t *testing.T) []byte
		want string
	}{
		{"a name that leaves the root", func(t *testing.T) []byte { return archive(t, entry{name: "../evil.yaml", content: "x"}) }, "leaves the archive's root"},
		{"an absolute name", func(t *testing.T) []byte { return archive(t, entry{name: "/etc/passwd", content: "x"}) }, "leaves the archive's root"},
		{"a symlink", func(t *testing.T) []byte {
			return archive(t, entry{name: "link.yaml", typ: tar.TypeSymlink, link: "/etc/passwd"})
		}, "is a link"},
		{"a hard link", func(t *testing.T) []byte {
			return archive(t, entry{name: "a.yaml", content: "x"}, entry{name: "b.yaml", typ: tar.TypeLink, link: "a.yaml"})
		}, "is a link"},
		{"too many files", func(t *testing.T) []byte {
			return archive(t, entry{name: "a", content: "x"}, entry{name: "b", content: "x"}, entry{name: "c", content: "x"})
		}, "more than 2 files"},
		{"too much once unpacked", func(t *testing.T) []byte {
			return archive(t, entry{name: "zeros", content: strings.Repeat("\x00", 2<<20)})
		}, "unpacks to more than 1 MiB"},
		{"not a tar.gz", func(*testing.T) []byte { return []byte("<html>not found</html>") }, "not a gzip-compressed tar archive"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.data(t)
			srv, _ := serveOnce(t, data)
			s := chartsource.New(chartsource.Options{MaxExtractedSize: 1 << 20, MaxArtifactFiles: 2})
			_, err := s.ArtifactFiles(context.Background(), render.Artifact{URL: srv.URL + "/a.tar.gz", Digest: digestOf(data)})
			if render.ReasonOf(err) != render.ReasonInvalidArtifact || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v (reason %q), want InvalidArtifact saying %q", err, render.ReasonOf(err), tt.want)
			}
		})
	}
}

// An OCI artifact as `flux push artifact` writes it: its tag resolves to the manifest digest,
// and the pinned digest is pulled even after the tag moved on.
func TestOCIArtifact(t *testing.T) {
	reg := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	ref := strings.TrimPrefix(reg.URL, "http://") + "/manifests/web:v1"
	push := func(content string) string {
		img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: static.NewLayer(
			archive(t, entry{name: "app.yaml", content: content}), chartsource.FluxContentMediaType)})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := name.ParseReference(ref, name.Insecure)
		if err := remote.Write(r, img); err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		return d.String()
	}
	s := chartsource.New(chartsource.Options{})
	d1 := push("kind: One")
	a := render.Artifact{URL: "oci://" + ref, PlainHTTP: true}
	got, err := s.ResolveArtifact(context.Background(), a)
	if err != nil || got != d1 {
		t.Fatalf("ResolveArtifact = %q, %v; want %s", got, err, d1)
	}
	d2 := push("kind: Two")
	if got, _ := s.ResolveArtifact(context.Background(), a); got != d2 {
		t.Fatalf("after a push ResolveArtifact = %q, want %s", got, d2)
	}
	for digest, want := range map[string]string{d1: "kind: One", d2: "kind: Two"} {
		a.Digest = digest
		files, err := s.ArtifactFiles(context.Background(), a)
		if err != nil || string(files["app.yaml"]) != want {
			t.Errorf("ArtifactFiles(%s) = %q, %v; want %q", digest, files["app.yaml"], err, want)
		}
	}
	a.Digest = digestOf([]byte("not pushed"))
	if _, err := s.ArtifactFiles(context.Background(), a); err == nil || render.ReasonOf(err) == "" {
		t.Errorf("a digest that is not in the registry: error %v, want a reasoned error", err)
	}
}

// A Helm chart directory in an artifact renders like a chart from a repository: its templates
// with the service's values, under the path the template names.
func TestArtifactHelmChart(t *testing.T) {
	data := archive(t,
		entry{name: "charts/web/Chart.yaml", content: "apiVersion: v2\nname: web\nversion: 1.2.3\n"},
		entry{name: "charts/web/values.yaml", content: "greeting: hello\n"},
		entry{name: "charts/web/templates/cm.yaml", content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  greeting: {{ .Values.greeting | quote }}\n"},
		entry{name: "README.md", content: "not part of the chart"})
	srv, _ := serveOnce(t, data)
	s := chartsource.New(chartsource.Options{})
	req := render.Request{Service: "web", TargetNamespace: "apps", ServiceValues: "greeting: from-the-service\n",
		Source: render.Source{Helm: &render.Helm{Artifact: &render.Artifact{URL: srv.URL + "/x.tar.gz", Digest: digestOf(data), Path: "charts/web"}}}}
	res, err := render.Render(context.Background(), req, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Objects) != 1 || res.Objects[0].GetName() != "web-settings" {
		t.Fatalf("objects %v, want the ConfigMap web-settings", res.Objects)
	}
	if got, _, _ := unstructured.NestedString(res.Objects[0].Object, "data", "greeting"); got != "from-the-service" {
		t.Errorf("greeting %q, want the service's value", got)
	}
	req.Source.Helm.Artifact.Path = "charts/missing"
	if _, err := render.Render(context.Background(), req, s); render.ReasonOf(err) != render.ReasonInvalidArtifact {
		t.Errorf("a path with no chart: %v (reason %q), want InvalidArtifact", err, render.ReasonOf(err))
	}
}

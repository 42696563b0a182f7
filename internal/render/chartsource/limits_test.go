package chartsource_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	helmregistry "helm.sh/helm/v4/pkg/registry"

	"holdfast.dev/holdfast/internal/chartserver"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/render/chartsource"
)

// hostileRegistry is go-containerregistry's in-memory registry behind a hook
// that lets a test answer some requests itself, as a broken or malicious
// registry would, and that counts the requests per path.
type hostileRegistry struct {
	srv  *httptest.Server
	hook atomic.Pointer[func(w http.ResponseWriter, r *http.Request) bool]

	mu   sync.Mutex
	gets map[string]int
}

func newHostileRegistry(t *testing.T) *hostileRegistry {
	t.Helper()
	r := &hostileRegistry{gets: map[string]int{}}
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet {
			r.mu.Lock()
			r.gets[req.URL.Path]++
			r.mu.Unlock()
		}
		if hook := r.hook.Load(); hook != nil && (*hook)(w, req) {
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hostileRegistry) host() string { return strings.TrimPrefix(r.srv.URL, "http://") }

func (r *hostileRegistry) helm(version string) render.Helm {
	return render.Helm{RepoURL: "oci://" + r.host() + "/charts", Chart: "hello", Version: version, PlainHTTP: true}
}

func (r *hostileRegistry) setHook(fn func(w http.ResponseWriter, r *http.Request) bool) {
	r.hook.Store(&fn)
}

func (r *hostileRegistry) getsOf(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gets[path]
}

// push pushes chart hello at version with Helm's registry client and returns
// its manifest.
func (r *hostileRegistry) push(t *testing.T, version string) ocispec.Manifest {
	t.Helper()
	client, err := helmregistry.NewClient(
		helmregistry.ClientOptPlainHTTP(),
		helmregistry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "config.json")),
		helmregistry.ClientOptWriter(io.Discard),
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Push(hello(t, version), r.host()+"/charts/hello:"+version); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, r.srv.URL+"/v2/charts/hello/manifests/"+version, nil)
	req.Header.Set("Accept", ocispec.MediaTypeImageManifest)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m ocispec.Manifest
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != 1 {
		t.Fatalf("pushed manifest has %d layers", len(m.Layers))
	}
	return m
}

// tag stores m under tag, as a registry whose manifest says what it likes.
func (r *hostileRegistry) tag(t *testing.T, tag string, m ocispec.Manifest) {
	t.Helper()
	m.MediaType = ocispec.MediaTypeImageManifest
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, r.srv.URL+"/v2/charts/hello/manifests/"+tag, bytes.NewReader(body))
	req.Header.Set("Content-Type", ocispec.MediaTypeImageManifest)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT manifest %s: HTTP %d", tag, resp.StatusCode)
	}
}

func blobPath(d ocispec.Descriptor) string { return "/v2/charts/hello/blobs/" + d.Digest.String() }

// A manifest that declares a huge layer or config is refused from the
// manifest alone: the blob is never requested, nothing is cached, and the
// error names the chart, the sizes and what to do. A small chart in the same
// registry still pulls and renders.
func TestOCIRefusesDeclaredOversize(t *testing.T) {
	tests := []struct {
		name string
		// mutate edits the manifest and returns the path of a blob that must
		// never be requested, or "".
		mutate func(m *ocispec.Manifest) string
		want   string
	}{
		{"chart layer declares 1 GiB", func(m *ocispec.Manifest) string {
			m.Layers[0].Size = 1 << 30
			return blobPath(m.Layers[0])
		}, "declares a chart layer of 1 GiB, over the 64 MiB limit"},
		{"chart config declares 1 GiB", func(m *ocispec.Manifest) string {
			m.Config.Size = 1 << 30
			return blobPath(m.Config)
		}, "declares a chart config of 1 GiB, over the 4 MiB limit"},
		// Each layer is under the limit, together they are not; which of the
		// two is refused depends on scheduling.
		{"two layers over the limit together", func(m *ocispec.Manifest) string {
			big := m.Layers[0]
			big.Size = 40 << 20
			second := big
			second.Digest = "sha256:abababababababababababababababababababababababababababababababab"
			m.Layers = []ocispec.Descriptor{big, second}
			return ""
		}, "of layers and manifests in all, over the 68 MiB limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := newHostileRegistry(t)
			m := reg.push(t, "0.1.0")
			never := tt.mutate(&m)
			reg.tag(t, "0.9.0", m)
			// A blob download that was let through hangs until the pull gives
			// up, so the refusal is what ends it whatever the scheduling.
			reg.setHook(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/blobs/") {
					return false
				}
				<-r.Context().Done()
				return true
			})

			src := chartsource.New(chartsource.Options{})
			_, err := src.Load(context.Background(), reg.helm("0.9.0"))
			if render.ReasonOf(err) != render.ReasonInvalidSource || render.Transient(err) {
				t.Fatalf("err = %v, want a permanent %s", err, render.ReasonInvalidSource)
			}
			for _, want := range []string{"chart hello 0.9.0 from oci://" + reg.host() + "/charts", "was not downloaded", tt.want, "make the chart smaller"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if never != "" && reg.getsOf(never) != 0 {
				t.Errorf("the oversized blob was requested %d times", reg.getsOf(never))
			}
			if src.Downloads() != 0 || src.CachedCharts() != 0 {
				t.Errorf("downloads %d, cached %d after a refusal", src.Downloads(), src.CachedCharts())
			}

			// A small chart from the same registry still pulls and renders.
			reg.setHook(func(http.ResponseWriter, *http.Request) bool { return false })
			h := reg.helm("0.1.0")
			res, err := render.Render(context.Background(), render.Request{
				Service:         "greeter",
				Cluster:         render.Cluster{Name: "c1"},
				TargetNamespace: "apps",
				Source:          render.Source{Helm: &h},
			}, src)
			if err != nil {
				t.Fatal(err)
			}
			if res.ChartVersion != "0.1.0" || len(res.Objects) == 0 {
				t.Errorf("rendered chart %s into %d objects", res.ChartVersion, len(res.Objects))
			}
		})
	}
}

// countingTransport counts the bytes read off the wire, below HTTP.
func countingTransport(n *atomic.Int64) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, n: n}, nil
	}
	return tr
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// A registry that sends more than the manifest declared is cut off: the
// client reads no more than the limit, whether or not the response announces
// its length, and never echoes what was sent.
func TestOCIBlobLargerThanDeclared(t *testing.T) {
	const limit = 1 << 20
	const sent = 32 << 20
	for _, announce := range []bool{false, true} {
		t.Run(fmt.Sprintf("Content-Length %v", announce), func(t *testing.T) {
			reg := newHostileRegistry(t)
			m := reg.push(t, "0.1.0")
			layer := blobPath(m.Layers[0])
			reg.setHook(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodGet || r.URL.Path != layer {
					return false
				}
				if announce {
					w.Header().Set("Content-Length", fmt.Sprint(sent))
				}
				chunk := bytes.Repeat([]byte("HOSTILE-BODY "), 1<<10)
				for written := 0; written < sent; written += len(chunk) {
					if _, err := w.Write(chunk); err != nil {
						return true
					}
					w.(http.Flusher).Flush()
				}
				return true
			})
			var wire atomic.Int64
			src := chartsource.New(chartsource.Options{MaxArchiveSize: limit, Transport: countingTransport(&wire)})
			_, err := src.Load(context.Background(), reg.helm("0.1.0"))
			if err == nil {
				t.Fatal("a layer larger than its manifest declared was accepted")
			}
			if !strings.Contains(err.Error(), "chart hello 0.1.0 from oci://") || strings.Contains(err.Error(), "HOSTILE") {
				t.Errorf("error %q does not name the chart, or echoes the body", err)
			}
			if n := wire.Load(); n > limit {
				t.Errorf("read %d bytes off the wire, limit %d", n, limit)
			} else {
				t.Logf("read %d bytes off the wire of the %d sent: %v", n, sent, err)
			}
			if src.CachedCharts() != 0 {
				t.Errorf("a rejected chart was cached")
			}
		})
	}
}

// A tag list that pages forever (oras-go follows every Link header, each page
// under 4 MiB) is cut off once the registry budget is spent.
func TestOCITagListCutOff(t *testing.T) {
	const limit = 64 << 10
	reg := newHostileRegistry(t)
	reg.push(t, "0.1.0")
	var pages, pageBytes atomic.Int64
	reg.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, "/tags/list") {
			return false
		}
		p := pages.Add(1)
		tags := make([]string, 500)
		for i := range tags {
			tags[i] = fmt.Sprintf("build-%d-%d-%s", p, i, strings.Repeat("x", 100))
		}
		body, _ := json.Marshal(map[string]any{"name": "charts/hello", "tags": tags})
		pageBytes.Store(int64(len(body)))
		w.Header().Set("Link", fmt.Sprintf(`</v2/charts/hello/tags/list?last=build-%d-499&n=500>; rel="next"`, p))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
		return true
	})
	src := chartsource.New(chartsource.Options{MaxArchiveSize: limit})
	_, err := src.Load(context.Background(), reg.helm(""))
	if render.ReasonOf(err) != render.ReasonInvalidSource {
		t.Fatalf("err = %v, want %s", err, render.ReasonInvalidSource)
	}
	for _, want := range []string{"chart hello latest from oci://", "tag list", "larger than 4160 KiB", "remove old tags or pin an exact version"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	budget := int64(limit) + 4<<20
	if max := budget/pageBytes.Load() + 2; pages.Load() > max {
		t.Errorf("served %d pages of %d bytes, want at most %d for a budget of %d", pages.Load(), pageBytes.Load(), max, budget)
	}
	// An exact version needs no tag list.
	if _, err := src.Load(context.Background(), reg.helm("0.1.0")); err != nil {
		t.Fatal(err)
	}
}

// The archive cache stays within its byte budget however many charts pass
// through it, keeps the most recently used, and does not keep an archive
// larger than the whole budget.
func TestCacheByteBudget(t *testing.T) {
	repo := chartserver.NewRepo()
	defer repo.Close()
	versions := []string{"1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0"}
	var largest int64
	for _, v := range versions {
		tgz := hello(t, v)
		largest = max(largest, int64(len(tgz)))
		if err := repo.Add(tgz); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	load := func(src *chartsource.Source, v string) {
		t.Helper()
		if _, err := src.Load(ctx, render.Helm{RepoURL: repo.URL(), Chart: "hello", Version: v}); err != nil {
			t.Fatal(err)
		}
	}

	budget := 2*largest + largest/2 // room for two archives
	src := chartsource.New(chartsource.Options{CacheBytes: budget})
	for _, v := range versions {
		load(src, v)
		if b := src.CachedBytes(); b > budget {
			t.Fatalf("after %s the cache holds %d bytes, budget %d", v, b, budget)
		}
	}
	if n := src.CachedCharts(); n != 2 {
		t.Errorf("cached %d charts, want 2", n)
	}
	downloads := src.Downloads()
	load(src, "1.5.0") // most recent: still cached
	load(src, "1.4.0")
	if src.Downloads() != downloads {
		t.Errorf("the two most recent charts were downloaded again")
	}
	load(src, "1.0.0") // evicted long ago
	if src.Downloads() != downloads+1 {
		t.Errorf("an evicted chart was not downloaded again")
	}

	// A budget smaller than one archive: charts load, nothing is kept.
	tiny := chartsource.New(chartsource.Options{CacheBytes: largest / 2})
	load(tiny, "1.0.0")
	load(tiny, "1.0.0")
	if tiny.CachedCharts() != 0 || tiny.CachedBytes() != 0 || tiny.Downloads() != 2 {
		t.Errorf("tiny budget: cached %d charts (%d bytes), %d downloads; want 0, 0, 2", tiny.CachedCharts(), tiny.CachedBytes(), tiny.Downloads())
	}
}

// An HTTP repository's archive or index.yaml over the limit is refused: at
// once when the response announces its length, at the limit when it does not.
func TestHTTPOverLimit(t *testing.T) {
	const limit = 1 << 20
	tgz := hello(t, "1.0.0")
	index := "apiVersion: v1\nentries:\n  hello:\n  - name: hello\n    version: 1.0.0\n    apiVersion: v2\n    urls: [hello-1.0.0.tgz]\n"
	tests := []struct {
		name     string
		big      string // "index" or "archive"
		announce bool
		want     string
	}{
		{"archive, chunked", "archive", false, "the chart archive 1.0.0 is larger than the 1 MiB limit; Holdfast does not download larger charts"},
		{"archive, Content-Length", "archive", true, "the chart archive 1.0.0 is larger than the 1 MiB limit"},
		{"index, chunked", "index", false, "the index.yaml is larger than the 1 MiB limit; prune old versions"},
		{"index, Content-Length", "index", true, "the index.yaml is larger than the 1 MiB limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				isIndex := r.URL.Path == "/index.yaml"
				if (tt.big == "index") != isIndex {
					if isIndex {
						_, _ = w.Write([]byte(index))
					} else {
						_, _ = w.Write(tgz)
					}
					return
				}
				const sent = 32 << 20
				if tt.announce {
					w.Header().Set("Content-Length", fmt.Sprint(sent))
				}
				chunk := bytes.Repeat([]byte("# HOSTILE-BODY\n"), 1<<10)
				for written := 0; written < sent; written += len(chunk) {
					if _, err := w.Write(chunk); err != nil {
						return
					}
					w.(http.Flusher).Flush()
				}
			}))
			defer srv.Close()
			var wire atomic.Int64
			src := chartsource.New(chartsource.Options{MaxArchiveSize: limit, Transport: countingTransport(&wire)})
			_, err := src.Load(context.Background(), render.Helm{RepoURL: srv.URL, Chart: "hello", Version: "1.0.0"})
			if render.ReasonOf(err) != render.ReasonInvalidSource || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "HOSTILE") {
				t.Fatalf("err = %v, want %s saying %q", err, render.ReasonInvalidSource, tt.want)
			}
			if n := wire.Load(); n > limit+64<<10 {
				t.Errorf("read %d bytes off the wire, limit %d", n, limit)
			}
		})
	}
}

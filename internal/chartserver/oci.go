package chartserver

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/registry"
	helmregistry "helm.sh/helm/v4/pkg/registry"
)

// Registry is an OCI registry listening on 127.0.0.1 over plain HTTP
// (go-containerregistry's reference implementation, in memory). Charts are
// pushed with Helm's own registry client. It is safe for concurrent use.
type Registry struct {
	srv      *httptest.Server
	credsDir string

	mu       sync.Mutex
	requests int
	blobGets int
}

// NewRegistry starts an empty OCI registry on a free loopback port.
func NewRegistry() (*Registry, error) {
	dir, err := os.MkdirTemp("", "holdfast-registry-")
	if err != nil {
		return nil, fmt.Errorf("start registry: %w", err)
	}
	r := &Registry{credsDir: dir}
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests++
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") {
			r.blobGets++
		}
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	return r, nil
}

// Host is the registry's host:port, e.g. 127.0.0.1:41234.
func (r *Registry) Host() string { return strings.TrimPrefix(r.srv.URL, "http://") }

// URL is the OCI repository URL under which charts are pushed,
// oci://127.0.0.1:<port>/charts, as a Holdfast ServiceTemplate would name it
// (with the chart name given separately).
func (r *Registry) URL() string { return "oci://" + r.Host() + "/charts" }

// Close stops the server.
func (r *Registry) Close() {
	r.srv.Close()
	_ = os.RemoveAll(r.credsDir)
}

// Requests returns how many requests the registry received.
func (r *Registry) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// BlobDownloads returns how many blob GET requests (chart layers and configs)
// the registry served; a cached chart costs none.
func (r *Registry) BlobDownloads() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.blobGets
}

// Push pushes a chart archive to <URL>/<chart name>:<chart version> with Helm's
// registry client and returns the reference it pushed
// (127.0.0.1:<port>/charts/<name>:<version>).
func (r *Registry) Push(tgz []byte) (string, error) {
	md, err := Metadata(tgz)
	if err != nil {
		return "", err
	}
	client, err := helmregistry.NewClient(
		helmregistry.ClientOptPlainHTTP(),
		helmregistry.ClientOptCredentialsFile(filepath.Join(r.credsDir, "config.json")),
		helmregistry.ClientOptWriter(io.Discard),
	)
	if err != nil {
		return "", fmt.Errorf("registry client: %w", err)
	}
	// OCI tags cannot hold "+"; Helm writes it as "_".
	ref := fmt.Sprintf("%s/charts/%s:%s", r.Host(), md.Name, strings.ReplaceAll(md.Version, "+", "_"))
	if _, err := client.Push(tgz, ref); err != nil {
		return "", fmt.Errorf("push chart %s %s: %w", md.Name, md.Version, err)
	}
	return ref, nil
}

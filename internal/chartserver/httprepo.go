package chartserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

// Repo is an HTTP Helm chart repository listening on 127.0.0.1. It serves
// /index.yaml, generated with Helm's repo package, and the chart archives it
// holds under /charts/<name>-<version>.tgz. Charts can be added while it runs.
// It is safe for concurrent use.
type Repo struct {
	srv      *httptest.Server
	username string
	password string

	mu       sync.Mutex
	index    *repo.IndexFile
	archives map[string][]byte // URL path -> archive
	requests map[string]int    // URL path -> requests served
}

// RepoOption configures a Repo.
type RepoOption func(*Repo)

// WithBasicAuth makes the repository require HTTP basic authentication.
func WithBasicAuth(username, password string) RepoOption {
	return func(r *Repo) {
		r.username = username
		r.password = password
	}
}

// NewRepo starts an empty chart repository on a free loopback port.
func NewRepo(opts ...RepoOption) *Repo {
	r := &Repo{
		index:    repo.NewIndexFile(),
		archives: map[string][]byte{},
		requests: map[string]int{},
	}
	for _, o := range opts {
		o(r)
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// URL is the repository URL, e.g. http://127.0.0.1:41234, as a Holdfast
// ServiceTemplate would name it.
func (r *Repo) URL() string { return r.srv.URL }

// Close stops the server.
func (r *Repo) Close() { r.srv.Close() }

// Add publishes a chart archive (as built by Package or Hello). Adding the same
// name and version twice replaces the archive.
func (r *Repo) Add(tgz []byte) error {
	md, err := Metadata(tgz)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(tgz)
	digest := hex.EncodeToString(sum[:])
	filename := fmt.Sprintf("charts/%s-%s.tgz", md.Name, md.Version)

	r.mu.Lock()
	defer r.mu.Unlock()
	if vs, ok := r.index.Entries[md.Name]; ok {
		kept := vs[:0]
		for _, v := range vs {
			if v.Version != md.Version {
				kept = append(kept, v)
			}
		}
		r.index.Entries[md.Name] = kept
	}
	// An empty base URL keeps the archive URL relative to the repository, as
	// many real repositories (GitHub Pages, chartmuseum) publish it.
	if err := r.index.MustAdd(md, filename, "", digest); err != nil {
		return fmt.Errorf("add chart %s %s to index: %w", md.Name, md.Version, err)
	}
	r.index.SortEntries()
	r.archives["/"+filename] = tgz
	return nil
}

// Requests returns how many requests for the given URL path ("/index.yaml",
// "/charts/hello-0.1.0.tgz") were served, whatever their outcome.
func (r *Repo) Requests(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[path]
}

// TotalRequests returns how many requests the server received.
func (r *Repo) TotalRequests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.requests {
		n += c
	}
	return n
}

func (r *Repo) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests[req.URL.Path]++
	r.mu.Unlock()

	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.username != "" || r.password != "" {
		u, p, ok := req.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(r.username)) != 1 ||
			subtle.ConstantTimeCompare([]byte(p), []byte(r.password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	}

	switch {
	case req.URL.Path == "/index.yaml":
		r.mu.Lock()
		data, err := yaml.Marshal(r.index)
		r.mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/x-yaml")
		_, _ = w.Write(data)
	case strings.HasPrefix(req.URL.Path, "/charts/"):
		r.mu.Lock()
		data, ok := r.archives[req.URL.Path]
		r.mu.Unlock()
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(data)
	default:
		http.NotFound(w, req)
	}
}

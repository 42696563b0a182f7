package chartsource_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/chartserver"
	"holdfast.dev/holdfast/internal/netpolicy"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/render/chartsource"
)

func mustPolicy(t *testing.T, o netpolicy.Options) *netpolicy.Policy {
	t.Helper()
	p, err := netpolicy.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantRefused checks err is an EgressDenied error that names what it must and is not retried.
func wantRefused(t *testing.T, err error, names ...string) {
	t.Helper()
	if render.ReasonOf(err) != chartsource.ReasonEgressDenied || render.Transient(err) {
		t.Fatalf("err = %v (reason %q, transient %v), want %s, not transient", err, render.ReasonOf(err), render.Transient(err), chartsource.ReasonEgressDenied)
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not name %q", err, n)
		}
	}
}

// TestEgressPolicy: a repository and a registry on 127.0.0.1 are read by default, refused when
// the operator denies private addresses, and read again when the operator allows them.
func TestEgressPolicy(t *testing.T) {
	repo := chartserver.NewRepo()
	defer repo.Close()
	if err := repo.Add(hello(t, "1.0.0")); err != nil {
		t.Fatal(err)
	}
	reg, err := chartserver.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if _, err := reg.Push(hello(t, "1.0.0")); err != nil {
		t.Fatal(err)
	}
	strict := mustPolicy(t, netpolicy.Options{DenyPrivate: true})
	allowed := mustPolicy(t, netpolicy.Options{DenyPrivate: true, AllowedHosts: []string{"127.0.0.1"}})
	sources := []render.Helm{
		{RepoURL: repo.URL(), Chart: "hello", Version: "1.0.0"},
		{RepoURL: repo.URL(), Chart: "hello", Version: "1.x"},
		{RepoURL: reg.URL(), Chart: "hello", Version: "1.0.0", PlainHTTP: true},
		{RepoURL: reg.URL(), Chart: "hello", Version: "1.x", PlainHTTP: true},
	}
	for _, h := range sources {
		t.Run(h.RepoURL+"@"+h.Version, func(t *testing.T) {
			if _, err := chartsource.New(chartsource.Options{}).Load(t.Context(), h); err != nil {
				t.Fatalf("default policy: %v", err)
			}
			repoBefore, regBefore := repo.TotalRequests(), reg.Requests()
			_, err := chartsource.New(chartsource.Options{Egress: strict}).Load(t.Context(), h)
			wantRefused(t, err, "127.0.0.1", string(netpolicy.RuleLoopback), "--egress-allowed-hosts")
			if repo.TotalRequests() != repoBefore || reg.Requests() != regBefore {
				t.Errorf("a refused source was sent a request")
			}
			if _, err := chartsource.New(chartsource.Options{Egress: allowed}).Load(t.Context(), h); err != nil {
				t.Fatalf("allowed host: %v", err)
			}
		})
	}
}

// TestMetadataRefused: repoURLs at the cloud metadata address are refused by the default policy
// before any connection is made (the test needs no network).
func TestMetadataRefused(t *testing.T) {
	for _, h := range []render.Helm{
		{RepoURL: "http://169.254.169.254/latest", Chart: "hello", Version: "1.0.0"},
		{RepoURL: "https://169.254.169.254/latest", Chart: "hello", Version: "1.0.0"},
		{RepoURL: "oci://169.254.169.254/charts", Chart: "hello", Version: "1.0.0", PlainHTTP: true},
		{RepoURL: "oci://169.254.169.254/charts", Chart: "hello", Version: "", PlainHTTP: true},
		{RepoURL: "oci://[fe80::1]:5000/charts", Chart: "hello", Version: "1.0.0"},
	} {
		t.Run(h.RepoURL+"@"+h.Version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			_, err := chartsource.New(chartsource.Options{}).Load(ctx, h)
			if strings.Contains(h.RepoURL, "fe80") {
				// Where IPv6 is off, opening the socket fails before the policy is asked.
				if render.ReasonOf(err) == chartsource.ReasonEgressDenied {
					wantRefused(t, err, "fe80::1", string(netpolicy.RuleLinkLocal))
				} else if err == nil {
					t.Fatal("a link-local registry was read")
				}
				return
			}
			wantRefused(t, err, "169.254.169.254", string(netpolicy.RuleMetadata))
		})
	}
}

// TestRepoRedirects: an index.yaml is not followed to another host; a chart archive is (GitHub
// release downloads and GitLab's registry redirect to object storage), without the credentials.
func TestRepoRedirects(t *testing.T) {
	tgz := hello(t, "1.0.0")
	var mu sync.Mutex
	cdnAuth := map[string]string{} // path -> Authorization header the CDN received
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cdnAuth[r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		_, _ = w.Write(tgz)
	}))
	defer cdn.Close()
	_, port, _ := net.SplitHostPort(cdn.Listener.Addr().String())
	elsewhere := "http://localhost:" + port // another host name for the same test server

	const index = "apiVersion: v1\nentries:\n  hello:\n  - name: hello\n    version: 1.0.0\n    apiVersion: v2\n    urls: [hello-1.0.0.tgz]\n"
	repo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ci" || p != "t0ps3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/away/index.yaml":
			http.Redirect(w, r, elsewhere+"/index.yaml", http.StatusMovedPermanently)
		case "/moved/index.yaml":
			http.Redirect(w, r, "/new/index.yaml", http.StatusMovedPermanently)
		case "/new/index.yaml":
			_, _ = w.Write([]byte(index))
		case "/moved/hello-1.0.0.tgz":
			http.Redirect(w, r, elsewhere+"/release-assets/hello-1.0.0.tgz", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer repo.Close()

	h := render.Helm{RepoURL: repo.URL + "/away", Chart: "hello", Version: "1.0.0", Username: "ci", Password: "t0ps3cret"}
	_, err := chartsource.New(chartsource.Options{}).Load(t.Context(), h)
	wantRefused(t, err, "index.yaml", "127.0.0.1", "localhost")
	mu.Lock()
	if len(cdnAuth) != 0 {
		t.Errorf("the other host was sent %v", cdnAuth)
	}
	mu.Unlock()

	h.RepoURL = repo.URL + "/moved"
	if _, err := chartsource.New(chartsource.Options{}).Load(t.Context(), h); err != nil {
		t.Fatalf("same-host index redirect and cross-host archive redirect: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if auth, ok := cdnAuth["/release-assets/hello-1.0.0.tgz"]; !ok || auth != "" {
		t.Errorf("archive redirect: fetched %v, Authorization sent to the other host %q", ok, auth)
	}
}

// TestForbidInsecureSkipTLSVerify: with the switch on, a source that skips TLS verification is
// refused before any request; without it, it is read.
func TestForbidInsecureSkipTLSVerify(t *testing.T) {
	tgz := hello(t, "1.0.0")
	var requests int
	var mu sync.Mutex
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		if r.URL.Path == "/index.yaml" {
			_, _ = w.Write([]byte("apiVersion: v1\nentries:\n  hello:\n  - name: hello\n    version: 1.0.0\n    apiVersion: v2\n    urls: [hello-1.0.0.tgz]\n"))
			return
		}
		_, _ = w.Write(tgz)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the verifying client's handshake failure below
	srv.StartTLS()
	defer srv.Close()
	h := render.Helm{RepoURL: srv.URL, Chart: "hello", Version: "1.0.0", InsecureSkipTLSVerify: true}
	if _, err := chartsource.New(chartsource.Options{}).Load(t.Context(), h); err != nil {
		t.Fatalf("insecureSkipTLSVerify allowed: %v", err)
	}
	mu.Lock()
	before := requests
	mu.Unlock()
	for _, h := range []render.Helm{h, {RepoURL: "oci://" + strings.TrimPrefix(srv.URL, "https://") + "/charts", Chart: "hello", Version: "1.0.0", InsecureSkipTLSVerify: true}} {
		_, err := chartsource.New(chartsource.Options{ForbidInsecureSkipTLSVerify: true}).Load(t.Context(), h)
		if render.ReasonOf(err) != chartsource.ReasonInsecureSkipTLSVerifyForbidden || render.Transient(err) ||
			!strings.Contains(err.Error(), "insecureSkipTLSVerify") {
			t.Errorf("%s: err = %v, want %s", h.RepoURL, err, chartsource.ReasonInsecureSkipTLSVerifyForbidden)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if requests != before {
		t.Errorf("a forbidden source was sent %d requests", requests-before)
	}
	h.InsecureSkipTLSVerify = false
	src := chartsource.New(chartsource.Options{ForbidInsecureSkipTLSVerify: true})
	if _, err := src.Load(t.Context(), h); render.ReasonOf(err) == chartsource.ReasonInsecureSkipTLSVerifyForbidden {
		t.Errorf("a verifying source was refused: %v", err)
	}
}

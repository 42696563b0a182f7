package chartsource_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/chartserver"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/render/chartsource"
)

func hello(t *testing.T, version string) []byte {
	t.Helper()
	tgz, err := chartserver.Hello(version)
	if err != nil {
		t.Fatal(err)
	}
	return tgz
}

func TestHTTPRepoCache(t *testing.T) {
	repo := chartserver.NewRepo()
	defer repo.Close()
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if err := repo.Add(hello(t, v)); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	src := chartsource.New(chartsource.Options{IndexTTL: time.Minute, Now: clock})
	ctx := context.Background()

	// 100 clusters render the same pinned chart at once: one index, one download.
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := src.Load(ctx, render.Helm{RepoURL: repo.URL(), Chart: "hello", Version: "1.0.0"})
			if err == nil && c.Metadata.Version != "1.0.0" {
				err = errors.New("wrong version " + c.Metadata.Version)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := repo.Requests("/charts/hello-1.0.0.tgz"); n != 1 {
		t.Errorf("archive downloaded %d times, want 1", n)
	}
	if n := repo.Requests("/index.yaml"); n != 1 {
		t.Errorf("index fetched %d times, want 1", n)
	}

	// A pinned version in the cache costs no request at all, even after the
	// index expired.
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	before := repo.TotalRequests()
	if _, err := src.Load(ctx, render.Helm{RepoURL: repo.URL(), Chart: "hello", Version: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	if n := repo.TotalRequests() - before; n != 0 {
		t.Errorf("cached pinned chart cost %d requests", n)
	}

	// A range needs the index (fetched again: it expired), then reuses it.
	for range 3 {
		c, err := src.Load(ctx, render.Helm{RepoURL: repo.URL(), Chart: "hello", Version: "1.x"})
		if err != nil {
			t.Fatal(err)
		}
		if c.Metadata.Version != "1.1.0" {
			t.Errorf("1.x resolved to %s", c.Metadata.Version)
		}
	}
	if n := repo.Requests("/index.yaml"); n != 2 {
		t.Errorf("index fetched %d times, want 2", n)
	}
	if n := repo.Requests("/charts/hello-1.1.0.tgz"); n != 1 {
		t.Errorf("1.1.0 downloaded %d times, want 1", n)
	}

	// A new version shows up once the index expires.
	if err := repo.Add(hello(t, "1.2.0")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	c, err := src.Load(ctx, render.Helm{RepoURL: repo.URL(), Chart: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata.Version != "1.2.0" {
		t.Errorf("latest = %s, want 1.2.0", c.Metadata.Version)
	}
	if src.Downloads() != 3 || src.CachedCharts() != 3 {
		t.Errorf("downloads %d, cached %d, want 3 and 3", src.Downloads(), src.CachedCharts())
	}

	// Each Load returns its own chart: modifying one does not change the next.
	c.Metadata.Description = "changed"
	c2, err := src.Load(ctx, render.Helm{RepoURL: repo.URL(), Chart: "hello", Version: "1.2.0"})
	if err != nil {
		t.Fatal(err)
	}
	if c2.Metadata.Description == "changed" {
		t.Errorf("Load returned a shared chart")
	}
}

func TestOCICache(t *testing.T) {
	reg, err := chartserver.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	for _, v := range []string{"0.1.0", "0.2.0"} {
		if _, err := reg.Push(hello(t, v)); err != nil {
			t.Fatal(err)
		}
	}
	src := chartsource.New(chartsource.Options{})
	h := render.Helm{RepoURL: reg.URL(), Chart: "hello", Version: "0.1.0", PlainHTTP: true}
	if _, err := src.Load(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	blobs, total := reg.BlobDownloads(), reg.Requests()
	if blobs == 0 {
		t.Fatalf("no blobs downloaded")
	}
	for range 10 {
		if _, err := src.Load(context.Background(), h); err != nil {
			t.Fatal(err)
		}
	}
	if reg.Requests() != total {
		t.Errorf("cached OCI chart cost %d more requests", reg.Requests()-total)
	}
	h.Version = ""
	c, err := src.Load(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata.Version != "0.2.0" {
		t.Errorf("latest = %s", c.Metadata.Version)
	}
	// Without PlainHTTP the client speaks TLS to a plain HTTP registry and fails.
	_, err = src.Load(context.Background(), render.Helm{RepoURL: reg.URL(), Chart: "hello", Version: "0.2.1"})
	if render.ReasonOf(err) != render.ReasonChartFetchFailed {
		t.Errorf("TLS to a plain registry: %v", err)
	}
}

func TestBasicAuth(t *testing.T) {
	repo := chartserver.NewRepo(chartserver.WithBasicAuth("ci", "t0ps3cret"))
	defer repo.Close()
	if err := repo.Add(hello(t, "1.0.0")); err != nil {
		t.Fatal(err)
	}
	src := chartsource.New(chartsource.Options{})
	good := render.Helm{RepoURL: repo.URL(), Chart: "hello", Version: "1.0.0", Username: "ci", Password: "t0ps3cret"}
	if _, err := src.Load(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	// The cache is keyed by credentials too: a wrong password does not get the
	// chart that the right one fetched.
	bad := good
	bad.Password = "wrong-password"
	_, err := src.Load(context.Background(), bad)
	if render.ReasonOf(err) != render.ReasonChartNotFound || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("wrong password: %v", err)
	}
	if strings.Contains(err.Error(), "wrong-password") || strings.Contains(err.Error(), "t0ps3cret") {
		t.Errorf("error leaks a password: %v", err)
	}
}

func TestFetchFailures(t *testing.T) {
	tgz := hello(t, "1.0.0")
	// The "hang" handler may still be running when the next case starts.
	var modeValue atomic.Value
	modeValue.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mode := modeValue.Load().(string)
		switch {
		case mode == "503":
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case mode == "hang":
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		case r.URL.Path == "/index.yaml":
			digest := "0000000000000000000000000000000000000000000000000000000000000000"
			if mode != "bad-digest" {
				digest = ""
			}
			_, _ = w.Write([]byte("apiVersion: v1\nentries:\n  hello:\n  - name: hello\n    version: 1.0.0\n    apiVersion: v2\n    urls: [hello-1.0.0.tgz]\n    digest: \"" + digest + "\"\n"))
		case mode == "garbage":
			_, _ = w.Write([]byte("not a tarball"))
		default:
			_, _ = w.Write(tgz)
		}
	}))
	defer srv.Close()

	tests := []struct {
		mode      string
		reason    string
		transient bool
		want      string
	}{
		{"503", render.ReasonChartFetchFailed, true, "HTTP 503"},
		{"hang", render.ReasonChartFetchFailed, true, "timed out"},
		{"bad-digest", render.ReasonChartFetchFailed, true, "the index says"},
		{"garbage", render.ReasonInvalidSource, false, "not a valid chart archive"},
		{"ok", "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			modeValue.Store(tt.mode)
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			_, err := chartsource.New(chartsource.Options{}).Load(ctx, render.Helm{RepoURL: srv.URL, Chart: "hello", Version: "1.0.0"})
			if tt.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if render.ReasonOf(err) != tt.reason || render.Transient(err) != tt.transient || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %s (transient %v) containing %q", err, tt.reason, tt.transient, tt.want)
			}
		})
	}
}

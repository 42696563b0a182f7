package apply_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/testsupport"
)

// One control plane serves every test of the package; each test works in its own namespaces
// and uses CRD groups of its own.
var (
	target *sandbox.ControlPlane
	admin  client.Client
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	if run, code := testsupport.BinariesForMain(); !run {
		return code
	}
	ctx := context.Background()
	var err error
	target, err = sandbox.Start(ctx, sandbox.Options{Name: "apply-test"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = target.Stop() }()
	admin, _, err = newClient(target.RESTConfig())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// writeCounter counts the mutating requests (anything but GET, HEAD and OPTIONS, which carry
// get, list and watch) a client sends; a dry-run PATCH counts as one.
type writeCounter struct {
	mu       sync.Mutex
	reads    int
	writes   int
	requests []string
	gets     []string // the paths of GETs of one object (not lists, watches or discovery)
	next     http.RoundTripper
}

func (c *writeCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		c.reads++
		if segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/"); len(segs) >= 6 && segs[len(segs)-4] == "namespaces" {
			c.gets = append(c.gets, req.URL.Path)
		}
	default:
		c.writes++
		c.requests = append(c.requests, req.Method+" "+req.URL.Path)
	}
	c.mu.Unlock()
	return c.next.RoundTrip(req)
}

// reset zeroes the counts and returns the previous ones.
func (c *writeCounter) reset() (reads, writes int, requests []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	reads, writes, requests = c.reads, c.writes, c.requests
	c.reads, c.writes, c.requests, c.gets = 0, 0, nil, nil
	return reads, writes, requests
}

// newClient returns a client like the rest of Holdfast uses (dynamic REST mapper), counting its
// requests.
func newClient(cfg *rest.Config) (client.Client, *writeCounter, error) {
	cfg = rest.CopyConfig(cfg)
	counter := &writeCounter{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		counter.next = rt
		return counter
	})
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	// The mapper Holdfast gives each target cluster's clients.
	mapper, err := fleet.NewRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{HTTPClient: httpClient, Mapper: mapper})
	if err != nil {
		return nil, nil, err
	}
	return c, counter, nil
}

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "apply-test-"}}
	if err := admin.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), ns) })
	return ns.Name
}

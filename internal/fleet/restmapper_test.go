package fleet

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/testsupport"
)

// discoveryCounter counts the discovery requests (GET /api… or /apis… of no resource) a mapper
// sends.
type discoveryCounter struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *discoveryCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/"); (segs[0] == "api" && len(segs) <= 2) || (segs[0] == "apis" && len(segs) <= 3) {
		c.n.Add(1)
	}
	return c.next.RoundTrip(req)
}

func newCountedMapper(t *testing.T, cfg *rest.Config) (*leanMapper, *discoveryCounter) {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	counter := &discoveryCounter{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewRESTMapper(cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	return m.(*leanMapper), counter
}

// TestRESTMapperLearnsOnlyWhatIsAsked: a target cluster's mapper resolves kinds with one request
// per group version, shares its mappings with other clusters' mappers, finds a CRD's kind once it
// is served, and leaves the other questions to controller-runtime's mapper.
func TestRESTMapperLearnsOnlyWhatIsAsked(t *testing.T) {
	testsupport.RequireBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := sandbox.Start(ctx, sandbox.Options{Name: "fleet-mapper-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })

	m, counter := newCountedMapper(t, cp.RESTConfig())
	expect := func(gk schema.GroupKind, version, resource string, scope meta.RESTScopeName) *meta.RESTMapping {
		t.Helper()
		mapping, err := m.RESTMapping(gk, version)
		if err != nil {
			t.Fatalf("RESTMapping(%s, %q): %v", gk, version, err)
		}
		if mapping.Resource.Resource != resource || mapping.Scope.Name() != scope || mapping.GroupVersionKind.Kind != gk.Kind {
			t.Fatalf("RESTMapping(%s, %q) = %s %s %s, want %s %s", gk, version, mapping.GroupVersionKind, mapping.Resource, mapping.Scope.Name(), resource, scope)
		}
		return mapping
	}
	cm := expect(schema.GroupKind{Kind: "ConfigMap"}, "v1", "configmaps", meta.RESTScopeNameNamespace)
	expect(schema.GroupKind{Kind: "Namespace"}, "v1", "namespaces", meta.RESTScopeNameRoot)
	expect(schema.GroupKind{Kind: "Pod"}, "v1", "pods", meta.RESTScopeNameNamespace) // not pods/status
	if n := counter.n.Load(); n != 1 {
		t.Fatalf("three kinds of v1 took %d discovery requests, want 1", n)
	}
	expect(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "", "deployments", meta.RESTScopeNameNamespace)
	if n := counter.n.Load(); n < 3 {
		t.Fatalf("a kind without a version took %d discovery requests in all; want its groups and its group version asked", n)
	}

	// Another cluster's mapper shares the mapping.
	other, _ := newCountedMapper(t, cp.RESTConfig())
	if got, err := other.RESTMapping(schema.GroupKind{Kind: "ConfigMap"}, "v1"); err != nil || got != cm {
		t.Fatalf("another mapper's ConfigMap mapping %p (%v), want the shared %p", got, err, cm)
	}

	// An unknown kind is no match, asked again each time (a CRD may come).
	widget := schema.GroupKind{Group: "mapper.test.holdfast.dev", Kind: "Widget"}
	if _, err := m.RESTMapping(widget, "v1"); !meta.IsNoMatchError(err) {
		t.Fatalf("unknown kind: %v, want a no-match error", err)
	}
	if _, err := m.RESTMapping(schema.GroupKind{Kind: "Nothing"}, "v1"); !meta.IsNoMatchError(err) {
		t.Fatalf("unknown kind of a known group version: %v, want a no-match error", err)
	}
	admin, err := client.New(cp.RESTConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(testsupport.CRD(widget.Group, widget.Kind)), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if err := admin.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := m.RESTMapping(widget, "v1")
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the CRD's kind never resolved: %v", err)
	}
	expect(widget, "v1", "widgets", meta.RESTScopeNameNamespace)

	// Other questions: controller-runtime's mapper.
	gvk, err := m.KindFor(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	if err != nil || gvk.Kind != "ConfigMap" {
		t.Fatalf("KindFor(configmaps) = %s, %v", gvk, err)
	}

	// Reset forgets.
	before := counter.n.Load()
	m.Reset()
	expect(schema.GroupKind{Kind: "ConfigMap"}, "v1", "configmaps", meta.RESTScopeNameNamespace)
	if counter.n.Load() == before {
		t.Fatal("after Reset, ConfigMap was resolved without asking the cluster")
	}
}

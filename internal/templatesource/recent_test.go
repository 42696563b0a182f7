package templatesource_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/templatesource"
)

// hub is a ConfigMap store seen as the hub's cache (metadata) and API server (data) are, which
// counts the ConfigMaps read from the API server.
type hub struct {
	cache, api client.Client
	reads      map[string]int
}

func newHub(t *testing.T, configMaps ...*corev1.ConfigMap) *hub {
	t.Helper()
	h := &hub{reads: map[string]int{}}
	cache, api := fake.NewClientBuilder(), fake.NewClientBuilder()
	for _, cm := range configMaps {
		cache.WithObjects(cm.DeepCopy())
		api.WithObjects(cm)
	}
	h.cache = cache.Build()
	h.api = api.WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				h.reads[key.Name]++
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	return h
}

// change changes the ConfigMap named name as the API server and then the cache see it.
func (h *hub) change(t *testing.T, name string, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{}
	if err := h.api.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		t.Fatal(err)
	}
	h.reads[name]--
	cm.Data = data
	if err := h.api.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	cached := &corev1.ConfigMap{}
	if err := h.cache.Get(ctx, client.ObjectKeyFromObject(cm), cached); err != nil {
		t.Fatal(err)
	}
	cached.Data = data
	if err := h.cache.Update(ctx, cached); err != nil {
		t.Fatal(err)
	}
	if cached.ResourceVersion != cm.ResourceVersion {
		t.Fatalf("the cache has ConfigMap %s at version %s, the API server at %s", name, cached.ResourceVersion, cm.ResourceVersion)
	}
}

// read reads every key of the ConfigMap named name as a template's manifests.
func read(t *testing.T, r templatesource.Reader, name string) string {
	t.Helper()
	src, err := r.Source(context.Background(), template(holdfastv1.ServiceTemplateSpec{
		Resources: []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceConfigMap, Name: name}},
	}))
	if err != nil {
		t.Fatalf("reading ConfigMap %s: %v", name, err)
	}
	var b strings.Builder
	for _, d := range src.Documents {
		b.Write(d.Content)
	}
	return b.String()
}

// TestRecentConfigMaps checks that a ConfigMap is read from the API server once per version
// while it fits in what RecentConfigMaps keeps, and that what it keeps is bounded in bytes.
func TestRecentConfigMaps(t *testing.T) {
	const bound = 1000
	big := strings.Repeat("b", 600)
	h := newHub(t,
		configMap("small", map[string]string{"a.yaml": "kind: A"}, nil),
		configMap("big-1", map[string]string{"k": big}, nil),
		configMap("big-2", map[string]string{"k": big}, nil),
		configMap("huge", map[string]string{"k": strings.Repeat("h", bound)}, nil),
	)
	r := templatesource.Reader{Client: h.cache, APIReader: h.api, ConfigMaps: templatesource.NewRecentConfigMaps(bound)}

	for range 3 {
		if got := read(t, r, "small"); got != "kind: A" {
			t.Fatalf("small = %q", got)
		}
	}
	if h.reads["small"] != 1 {
		t.Errorf("small read %d times from the API server, want once", h.reads["small"])
	}

	t.Log("A new version is read, once")
	h.change(t, "small", map[string]string{"a.yaml": "kind: B"})
	for range 3 {
		if got := read(t, r, "small"); got != "kind: B" {
			t.Fatalf("small after the change = %q", got)
		}
	}
	if h.reads["small"] != 2 {
		t.Errorf("small read %d times from the API server after one change, want twice", h.reads["small"])
	}

	t.Log("Two ConfigMaps that do not fit together push each other out; one larger than the bound is never kept")
	for range 2 {
		read(t, r, "big-1")
		read(t, r, "big-2")
		read(t, r, "huge")
	}
	for _, name := range []string{"big-1", "big-2", "huge"} {
		if h.reads[name] != 2 {
			t.Errorf("%s read %d times from the API server, want twice", name, h.reads[name])
		}
	}

	t.Log("Without RecentConfigMaps every read goes to the API server")
	r.ConfigMaps = nil
	read(t, r, "small")
	read(t, r, "small")
	if h.reads["small"] != 4 {
		t.Errorf("small read %d times from the API server, want 4", h.reads["small"])
	}
}

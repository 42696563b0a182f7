package drift

import (
	"context"
	"testing"

	"holdfast.dev/holdfast/internal/testsupport"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, rv, replicas, otherAnnotation string) *unstructured.Unstructured {
	t.Helper()
	text := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  resourceVersion: "` + rv + `"
  annotations: {other: "` + otherAnnotation + `"}
  managedFields:
  - manager: holdfast
    operation: Apply
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec": {"f:replicas": {}}}
  - manager: kube-controller-manager
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {"f:metadata": {"f:annotations": {"f:other": {}}}}
spec:
  replicas: ` + replicas + `
`
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// scaledBy moves spec.replicas of u to manager, as the API server does when manager changes it.
func scaledBy(t *testing.T, u *unstructured.Unstructured, manager string) *unstructured.Unstructured {
	t.Helper()
	entries := u.GetManagedFields()
	entries[0].FieldsV1.SetRawString(`{"f:spec": {}}`)
	entries = append(entries, testsupport.ManagedFieldsEntry(manager, "Update", "apps/v1", `{"f:spec": {"f:replicas": {}}}`))
	u.SetManagedFields(entries)
	return u
}

// TestOwnedChanged: only a change to a value Holdfast owns is reported by the watch path.
func TestOwnedChanged(t *testing.T) {
	cases := []struct {
		name     string
		old, new *unstructured.Unstructured
		want     bool
	}{
		{"resync", obj(t, "1", "2", "a"), obj(t, "1", "2", "a"), false},
		{"another manager's annotation", obj(t, "1", "2", "a"), obj(t, "2", "2", "b"), false},
		{"an owned value", obj(t, "1", "2", "a"), scaledBy(t, obj(t, "2", "5", "a"), "kubectl"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := compactPair(t, c.old, c.new).pending.Load() != nil; got != c.want {
				t.Fatalf("change reported = %v, want %v", got, c.want)
			}
		})
	}
}

// stoppable is an informer whose cache can be stopped.
type stoppable struct {
	*controllertest.FakeInformer
	stopped bool
}

func (s *stoppable) IsStopped() bool { return s.stopped }

type fakeCache struct {
	*informertest.FakeInformers
	inf *stoppable
}

func (c *fakeCache) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return c.inf, nil
}

func TestWatchesLetStoppedCachesGo(t *testing.T) {
	w := &Watches{OnChange: func(types.NamespacedName, Change) {}}
	cluster := types.NamespacedName{Namespace: "fleet", Name: "c1"}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	old := &fakeCache{FakeInformers: &informertest.FakeInformers{}, inf: &stoppable{FakeInformer: &controllertest.FakeInformer{}}}
	for range 2 {
		if err := w.Ensure(context.Background(), cluster, old, gvk); err != nil {
			t.Fatal(err)
		}
	}
	if len(w.watched) != 1 {
		t.Fatalf("%d handlers recorded, want 1", len(w.watched))
	}
	old.inf.stopped = true // the connection was replaced
	rebuilt := &fakeCache{FakeInformers: &informertest.FakeInformers{}, inf: &stoppable{FakeInformer: &controllertest.FakeInformer{}}}
	if err := w.Ensure(context.Background(), cluster, rebuilt, gvk); err != nil {
		t.Fatal(err)
	}
	if _, kept := w.watched[watchKey{cache: old, gvk: gvk}]; kept || len(w.watched) != 1 {
		t.Fatalf("handlers %v: want only the rebuilt cache's", w.watched)
	}
}

package clusterservicestatus

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/rendercache"
)

// TestChangesToUndeclaredObjectsBringNoReconcile: a labelled object whose owner annotation names
// a service set of the cluster, but that the service does not declare there (another cluster's
// copy on the same API server, a pruned object, a labelled copy), is not this status object's
// drift: nothing is remembered and nothing queued. Without the service's declaration in memory
// (after a restart), the reconcile judges.
func TestChangesToUndeclaredObjectsBringNoReconcile(t *testing.T) {
	key := types.NamespacedName{Namespace: "fleet", Name: "web.c1"}
	c1 := types.NamespacedName{Namespace: "fleet", Name: "c1"}
	settings := &unstructured.Unstructured{}
	settings.SetAPIVersion("v1")
	settings.SetKind("ConfigMap")
	settings.SetName("settings") // no namespace: the service's, "demo"
	d, err := rendercache.NewDeclaration("in", &render.Result{Objects: []*unstructured.Unstructured{settings}, Digest: "out"}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, namespace string
		remembered      bool // the declaration is in memory
		want            bool
	}{
		{name: "a declared object", namespace: "demo", remembered: true, want: true},
		{name: "another cluster's copy in another namespace", namespace: "demo-c2", remembered: true},
		{name: "unknown after a restart", namespace: "demo-c2", want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := driftReconciler(t, statusObject("fleet", "web.c1", "web", "c1"))
			if tc.remembered {
				r.memory.setDeclarations(key, "c1", map[string]*rendercache.Declaration{"app": d})
			}
			c := changed("web") // ConfigMap demo/settings of service app
			c.Object.SetNamespace(tc.namespace)
			r.onDrift(c1, c)
			if got := len(r.memory.takeDrifts(key)) == 1; got != tc.want {
				t.Fatalf("drift remembered = %v, want %v", got, tc.want)
			}
			if got := len(r.drifted) == 1; got != tc.want {
				t.Fatalf("reconcile asked for = %v, want %v", got, tc.want)
			}
		})
	}
}

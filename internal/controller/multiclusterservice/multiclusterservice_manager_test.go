package multiclusterservice

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestStatusesChanged: a service set looks at its status objects at once when one is created
// or deleted, statusCoalesce after one's status changed (several changes meanwhile make one
// look), and not at all when only the hub's annotations on one changed.
func TestStatusesChanged(t *testing.T) {
	owned := func(name string) *holdfastv1.ClusterServiceStatus {
		css := &holdfastv1.ClusterServiceStatus{}
		css.Namespace, css.Name, css.ResourceVersion = "fleet", name, "1"
		css.OwnerReferences = []metav1.OwnerReference{{APIVersion: holdfastv1.GroupVersion.String(), Kind: "MultiClusterService", Name: "web", Controller: new(true)}}
		return css
	}
	ctx := context.Background()
	h := statusesChanged()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	want := reconcile.Request{}
	want.Name = "web"
	take := func(what string) {
		t.Helper()
		if q.Len() != 1 {
			t.Fatalf("%s: %d requests queued, want 1", what, q.Len())
		}
		got, _ := q.Get()
		q.Done(got)
		if got != want {
			t.Fatalf("%s: queued %v, want %v", what, got, want)
		}
	}

	h.Create(ctx, event.CreateEvent{Object: owned("a")}, q)
	take("created")

	annotated := owned("a")
	annotated.Annotations = map[string]string{"holdfast.dev/notified-through": "now"}
	h.Update(ctx, event.UpdateEvent{ObjectOld: owned("a"), ObjectNew: annotated}, q)
	time.Sleep(2 * statusCoalesce)
	if q.Len() != 0 {
		t.Fatalf("an annotation change queued %d requests, want none", q.Len())
	}

	for i, name := range []string{"a", "b", "c"} {
		changed := owned(name)
		changed.Status.InSyncCount = int32(i + 1)
		h.Update(ctx, event.UpdateEvent{ObjectOld: owned(name), ObjectNew: changed}, q)
	}
	if q.Len() != 0 {
		t.Fatalf("status changes queued %d requests at once, want them after %s", q.Len(), statusCoalesce)
	}
	time.Sleep(2 * statusCoalesce)
	take("three status changes")

	h.Delete(ctx, event.DeleteEvent{Object: owned("b")}, q)
	take("deleted")

	foreign := owned("d")
	foreign.OwnerReferences[0].Kind = "Deployment"
	h.Create(ctx, event.CreateEvent{Object: foreign}, q)
	if q.Len() != 0 {
		t.Fatalf("a status object another kind owns queued %d requests", q.Len())
	}
}

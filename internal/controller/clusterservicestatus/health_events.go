package clusterservicestatus

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// healthEventDelay is how long after a change to one of its objects that is not drift (their
// controllers writing status: pods starting, a rollout progressing) a status object whose
// objects are not all healthy is read again. The changes within it make one re-read: a
// Deployment of many replicas writes its status many times while it rolls out.
const healthEventDelay = time.Second

// onUpdate reads a status object's health again soon after one of its objects changed, while
// what it recorded is not all healthy (healthPending): health follows the objects' watch events,
// not only the timer of healthWait. Called from informer goroutines; it never blocks.
func (r *Reconciler) onUpdate(cluster types.NamespacedName, obj *unstructured.Unstructured) {
	owner := obj.GetAnnotations()[holdfastv1.OwnerAnnotation]
	if owner == "" {
		return
	}
	key := types.NamespacedName{Namespace: cluster.Namespace, Name: naming.StatusName(owner, cluster.Name)}
	css := &holdfastv1.ClusterServiceStatus{}
	if err := r.Client.Get(context.Background(), key, css); err != nil || !statusOf(css, owner, cluster) || !healthPending(css) {
		return
	}
	r.healthReads.after(key, healthEventDelay, func() { r.enqueue(key) })
}

// delayed runs one function per key some time after it was first asked, however often it is
// asked meanwhile.
type delayed struct {
	mu      sync.Mutex
	pending map[types.NamespacedName]bool
}

func (d *delayed) after(key types.NamespacedName, wait time.Duration, f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending[key] {
		return
	}
	if d.pending == nil {
		d.pending = map[types.NamespacedName]bool{}
	}
	d.pending[key] = true
	time.AfterFunc(wait, func() {
		d.mu.Lock()
		delete(d.pending, key)
		d.mu.Unlock()
		f()
	})
}

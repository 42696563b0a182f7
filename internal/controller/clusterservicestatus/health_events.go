package clusterservicestatus

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/naming"
)

// healthEventDelay is how long after a change to one of its objects that is not drift (their
// controllers writing status: pods starting, a rollout progressing) a status object whose
// objects are not all healthy is read again. The changes within it make one re-read: a
// Deployment of many replicas writes its status many times while it rolls out.
const healthEventDelay = time.Second

// onUpdate handles a change to one of a status object's objects that is not drift, or an object
// that appeared (drift.Watches.OnUpdate); onOwnWrite, one Holdfast made. Either may change its
// health: while what the status object recorded is not all healthy (healthPending), it is read
// again soon (healthEventDelay), so that health follows the objects' watch events, not only the
// timer of healthWait. Someone else's may also have put back an object whose drift waits
// (Report mode, a refused correction): the status object then compares with the cluster soon
// (restoreCheckDelay), which ends that drift as restored by them. Called from informer
// goroutines; neither blocks.
func (r *Reconciler) onUpdate(cluster types.NamespacedName, obj *unstructured.Unstructured) {
	r.afterUpdate(cluster, obj, false)
}

func (r *Reconciler) onOwnWrite(cluster types.NamespacedName, obj *unstructured.Unstructured) {
	r.afterUpdate(cluster, obj, true)
}

func (r *Reconciler) afterUpdate(cluster types.NamespacedName, obj *unstructured.Unstructured, own bool) {
	owner := obj.GetAnnotations()[holdfastv1.OwnerAnnotation]
	if owner == "" {
		return
	}
	key := types.NamespacedName{Namespace: cluster.Namespace, Name: naming.StatusName(owner, cluster.Name)}
	css := &holdfastv1.ClusterServiceStatus{}
	if err := r.Client.Get(context.Background(), key, css); err != nil || !statusOf(css, owner, cluster) {
		return
	}
	if !own && driftWaits(css, obj) {
		r.restoreChecks.after(key, restoreCheckDelay, func() { r.enqueueRecheck(key, cluster.Name) })
	}
	if healthPending(css) {
		r.healthReads.after(key, healthEventDelay, func() { r.enqueue(key) })
	}
}

// restoreCheckDelay is how long after someone else's change to an object whose drift waits its
// status object compares with the cluster. The changes within it make one comparison: the
// controllers of a drifted Deployment write its status many times.
const restoreCheckDelay = 250 * time.Millisecond

// driftWaits reports whether css records obj (by kind, namespace and name) in a state whose
// drift waits for something (drift.Unresolved), other than Contested: a Contested object is
// compared when its backoff or fight window ends (drift.Fights.Next), and shows Contested for as
// long as its fight lasts even when put back.
func driftWaits(css *holdfastv1.ClusterServiceStatus, obj *unstructured.Unstructured) bool {
	if css.Status.DriftedCount == 0 && !conditions.IsTrue(css, holdfastv1.DriftedCondition) {
		return false
	}
	gvk := obj.GroupVersionKind()
	for _, rs := range css.Status.Resources {
		if rs.Kind == gvk.Kind && rs.Group == gvk.Group && rs.Name == obj.GetName() && rs.Namespace == obj.GetNamespace() {
			return drift.Unresolved(rs.State) && rs.State != holdfastv1.ResourceContested
		}
	}
	return false
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

package clusterservicestatus

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
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
	if !own && r.driftWaits(key, css, obj) {
		ctrl.Log.WithName("drift").V(1).Info("An object whose drift waits changed; comparing", "statusObject", key.String(),
			"kind", obj.GetKind(), "namespace", obj.GetNamespace(), "name", obj.GetName())
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

// driftWaits reports whether the status object records obj in a state whose drift waits for
// something (drift.Unresolved), other than Contested: a Contested object is compared when its
// backoff or fight window ends (drift.Fights.Next), and shows Contested for as long as its fight
// lasts even when put back. What this process recorded last is asked first: the hub cache may
// not hold the status object that says so yet.
func (r *Reconciler) driftWaits(key types.NamespacedName, css *holdfastv1.ClusterServiceStatus, obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	ref := apply.Ref{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	waits := func(state holdfastv1.ResourceState) bool {
		return drift.Unresolved(state) && state != holdfastv1.ResourceContested
	}
	if rec := r.memory.recordedAt(key, css.ResourceVersion); rec != nil {
		return waits(rec.unusual[driftRef(ref)].State)
	}
	if css.Status.DriftedCount == 0 && !conditions.IsTrue(css, holdfastv1.DriftedCondition) {
		return false
	}
	for _, rs := range css.Status.Resources {
		if unversioned(toRef(rs.ResourceRef)) == ref {
			return waits(rs.State)
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

package clusterservicestatus

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/metrics"
)

// The drift watches keep a full snapshot only of the objects an inventory holds (drift.Applied):
// the status objects register what they applied when they read or write their inventory, and
// what they are about to apply before they apply it, so the watch event after an apply finds it
// registered.

// clusterOf is the Cluster of a status object.
func clusterOf(css *holdfastv1.ClusterServiceStatus) types.NamespacedName {
	return types.NamespacedName{Namespace: css.Namespace, Name: css.Spec.Cluster}
}

// registerInventory makes entries, the status object's whole inventory, what it applied.
func (r *Reconciler) registerInventory(css *holdfastv1.ClusterServiceStatus, entries []holdfastv1.ResourceStatus) {
	refs := make([]drift.ObjectRef, 0, len(entries))
	for _, rs := range entries {
		refs = append(refs, drift.ObjectRef{Group: rs.Group, Kind: rs.Kind, Namespace: rs.Namespace, Name: rs.Name})
	}
	r.Applied.Set(clusterOf(css), types.NamespacedName{Namespace: css.Namespace, Name: css.Name}, refs)
}

// registerApplying adds objs, about to be applied with defaultNamespace for those that name
// none, to what the status object applied.
func (r *Reconciler) registerApplying(css *holdfastv1.ClusterServiceStatus, objs []*unstructured.Unstructured, defaultNamespace string) {
	refs := make([]drift.ObjectRef, 0, len(objs))
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		ref := drift.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()}
		refs = append(refs, ref)
		if ref.Namespace == "" && defaultNamespace != "" {
			// As apply defaults it, unless the kind is cluster-scoped: both, to be sure.
			ref.Namespace = defaultNamespace
			refs = append(refs, ref)
		}
	}
	r.Applied.Add(clusterOf(css), types.NamespacedName{Namespace: css.Namespace, Name: css.Name}, refs)
}

// targetCacheUsage is what the target caches keep, for package metrics.
func (r *Reconciler) targetCacheUsage() []metrics.TargetCacheUsage {
	usage := r.Applied.Usage()
	out := make([]metrics.TargetCacheUsage, 0, len(usage))
	for _, u := range usage {
		out = append(out, metrics.TargetCacheUsage{Cluster: u.Cluster.String(), Snapshots: u.Snapshots, SnapshotBytes: u.SnapshotBytes,
			Oversized: u.Oversized, Foreign: u.Foreign, Refused: u.Refused, Over: u.Over})
	}
	return out
}

// forgetStatus forgets what this process knew of a status object that is gone.
func (r *Reconciler) forgetStatus(key types.NamespacedName) {
	r.memory.forget(key)
	r.fights.ForgetStatus(key)
	r.Applied.Forget(key)
	r.recordings.recorded(key)
	r.prunedWork.Delete(key)
	if r.Statuses != nil {
		r.Statuses.ForgetStatus(key)
	}
}

// forgetCluster forgets what this process knew of the status objects of a Cluster that is gone.
func (r *Reconciler) forgetCluster(cluster types.NamespacedName) {
	for _, key := range r.memory.forgetCluster(cluster) {
		r.fights.ForgetStatus(key)
	}
}

// onCompare asks the status objects that applied an object a watch could not judge (a stub:
// drift.Change.Compare) to compare it with the cluster. Owners come from their inventories,
// never from the object's annotations. It runs on informer goroutines and never blocks.
func (r *Reconciler) onCompare(cluster types.NamespacedName, obj *unstructured.Unstructured) {
	gvk := obj.GroupVersionKind()
	for _, key := range r.Applied.Owners(cluster, drift.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}) {
		if !r.enqueueRecheck(key, cluster.Name) {
			ctrl.Log.WithName("drift").V(1).Info("Recheck queue full; the next full reconcile compares", "statusObject", key.String())
		}
	}
}

package multiclusterservice

import (
	"context"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller/index"
	"holdfast.dev/holdfast/internal/templatesource"
)

// SetupWithManager registers the controller. It needs the indexes of package index.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&holdfastv1.MultiClusterService{}).
		Watches(&holdfastv1.ClusterServiceStatus{}, statusesChanged()).
		Watches(&holdfastv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.serviceSetsForCluster),
			builder.WithPredicates(clusterSelectionChanged())).
		Watches(&holdfastv1.ServiceTemplate{}, handler.EnqueueRequestsFromMapFunc(r.rolloutsUsingTemplate),
			builder.WithPredicates(templatesource.Changed())).
		WithOptions(opts).
		Named("multiclusterservice").
		Complete(r)
}

// statusCoalesce is how long a service set waits, after a status object of its changed, before
// it looks at them all. In a fleet-wide change every cluster's status object changes within
// seconds, each a look at every status object of the set (25 ms at 1,000): those that change
// meanwhile are looked at together, a couple of looks a second instead of one per change.
const statusCoalesce = 500 * time.Millisecond

// statusesChanged enqueues the service set that owns a status object (its controller owner
// reference, as Owns would): at once when the status object is created or deleted, after
// statusCoalesce when its spec, status, labels or deletion changed, and not when only the rest
// of its metadata did (the hub's annotations on a Pull cluster's status object).
func statusesChanged() handler.EventHandler {
	owner := func(o client.Object) (reconcile.Request, bool) {
		ref := metav1.GetControllerOf(o)
		if ref == nil || ref.Kind != "MultiClusterService" || ref.APIVersion != holdfastv1.GroupVersion.String() {
			return reconcile.Request{}, false
		}
		return reconcile.Request{NamespacedName: types.NamespacedName{Name: ref.Name}}, true
	}
	now := func(o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if req, ok := owner(o); ok {
			q.Add(req)
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			now(e.Object, q)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			now(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			o, ok1 := e.ObjectOld.(*holdfastv1.ClusterServiceStatus)
			n, ok2 := e.ObjectNew.(*holdfastv1.ClusterServiceStatus)
			if ok1 && ok2 && o.Generation == n.Generation && equality.Semantic.DeepEqual(o.Status, n.Status) &&
				reflect.DeepEqual(o.Labels, n.Labels) && o.DeletionTimestamp.Equal(n.DeletionTimestamp) {
				return
			}
			if req, ok := owner(e.ObjectNew); ok {
				q.AddAfter(req, statusCoalesce)
			}
		},
	}
}

// clusterSelectionChanged passes Cluster events that can change which MultiClusterServices
// select it: creation, deletion and label changes; not the status heartbeats.
func clusterSelectionChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !reflect.DeepEqual(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// serviceSetsForCluster maps a Cluster to the MultiClusterServices that select it now or have a
// ClusterServiceStatus for it (which may have to go).
func (r *Reconciler) serviceSetsForCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	c, ok := obj.(*holdfastv1.Cluster)
	if !ok {
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	names := map[string]bool{}
	statuses, err := index.StatusesOfCluster(ctx, r.Client, client.ObjectKeyFromObject(c))
	if err != nil {
		log.Error(err, "Mapping a Cluster to MultiClusterServices failed")
	}
	for _, css := range statuses {
		names[css.Spec.MultiClusterService] = true
	}
	list := &holdfastv1.MultiClusterServiceList{}
	if err := r.Client.List(ctx, list); err != nil {
		log.Error(err, "Listing MultiClusterServices failed")
	}
	for i := range list.Items {
		m := &list.Items[i]
		sel, err := metav1.LabelSelectorAsSelector(&m.Spec.ClusterSelector.LabelSelector)
		if err == nil && r.Tenancy.Selects(m, sel, c) {
			names[m.Name] = true
		}
	}
	reqs := make([]reconcile.Request, 0, len(names))
	for n := range names {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: n}})
	}
	return reqs
}

// rolloutsUsingTemplate maps a ServiceTemplate to the service sets with a rollout that use it:
// a change of the template is a new revision of their services.
func (r *Reconciler) rolloutsUsingTemplate(ctx context.Context, obj client.Object) []reconcile.Request {
	sets, err := index.ServiceSetsUsingTemplate(ctx, r.Client, client.ObjectKeyFromObject(obj))
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Mapping a ServiceTemplate to MultiClusterServices failed")
		return nil
	}
	var reqs []reconcile.Request
	for i := range sets {
		if sets[i].Spec.Rollout != nil {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: sets[i].Name}})
		}
	}
	return reqs
}

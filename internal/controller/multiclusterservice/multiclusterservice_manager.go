package multiclusterservice

import (
	"context"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		Owns(&holdfastv1.ClusterServiceStatus{}).
		Watches(&holdfastv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.serviceSetsForCluster),
			builder.WithPredicates(clusterSelectionChanged())).
		Watches(&holdfastv1.ServiceTemplate{}, handler.EnqueueRequestsFromMapFunc(r.rolloutsUsingTemplate),
			builder.WithPredicates(templatesource.Changed())).
		WithOptions(opts).
		Named("multiclusterservice").
		Complete(r)
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

package serviceset

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/tenancy"
)

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&holdfastv1.ServiceSet{}).
		Watches(&holdfastv1.MultiClusterService{}, handler.EnqueueRequestsFromMapFunc(r.serviceSetOf)).
		WithOptions(opts).
		Named("serviceset").
		Complete(r)
}

// serviceSetOf maps a MultiClusterService run for a ServiceSet to that ServiceSet: a change of
// its status, or its deletion, is the ServiceSet's to report.
func (r *Reconciler) serviceSetOf(ctx context.Context, obj client.Object) []reconcile.Request {
	mcs, ok := obj.(*holdfastv1.MultiClusterService)
	if !ok || tenancy.TenantOf(mcs) == "" {
		return nil
	}
	list := &holdfastv1.ServiceSetList{}
	if err := r.Client.List(ctx, list, client.InNamespace(tenancy.TenantOf(mcs))); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Mapping a MultiClusterService to its ServiceSet failed")
		return nil
	}
	for _, ss := range list.Items {
		if MultiClusterServiceName(ss.Namespace, ss.Name) == mcs.Name {
			return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(&ss)}}
		}
	}
	return nil
}

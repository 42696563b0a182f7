package servicetemplate

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller/index"
)

// SetupWithManager registers the controller; it needs package index's indexes. A ConfigMap or
// Secret appearing or going brings back the templates that read it; both are watched as
// metadata only, which is all the hub's cache keeps of them.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&holdfastv1.ServiceTemplate{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.templatesReading("ConfigMap")), builder.OnlyMetadata).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.templatesReading("Secret")), builder.OnlyMetadata).
		WithOptions(opts).
		Named("servicetemplate").
		Complete(r)
}

func (r *Reconciler) templatesReading(kind string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		templates, err := index.TemplatesReading(ctx, r.Client, kind, client.ObjectKeyFromObject(obj))
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Mapping a source to ServiceTemplates failed", "kind", kind)
		}
		reqs := make([]reconcile.Request, 0, len(templates))
		for i := range templates {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&templates[i])})
		}
		return reqs
	}
}

package apply

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ensureNamespace creates Options.EnsureNamespace when the cluster does not have it, unless
// desired declares that Namespace itself (it is then applied, and handled, like any object). A
// failure is only logged: the objects in it then fail with the API server's reason. A dry run
// creates nothing: the objects in a namespace the apply would create are reported as created,
// unvalidated (dryRunOne), as those in a Namespace the set declares.
func (r *run) ensureNamespace(ctx context.Context, desired []*unstructured.Unstructured) {
	name := r.opts.EnsureNamespace
	if name == "" {
		return
	}
	for _, d := range desired {
		if d != nil && d.GetKind() == "Namespace" && d.GroupVersionKind().Group == "" && d.GetName() == name {
			return
		}
	}
	// Unstructured, as every read of apply: a typed read would start a cache of every Namespace,
	// which a namespace-limited identity cannot list.
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	err := r.a.client.Get(ctx, client.ObjectKey{Name: name}, ns)
	if apierrors.IsNotFound(err) && r.opts.DryRun {
		r.newNamespaces[name] = true // before any object is handled: no lock needed
		return
	}
	if apierrors.IsNotFound(err) {
		err = client.IgnoreAlreadyExists(r.a.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
		if err == nil {
			ctrl.LoggerFrom(ctx).Info("Created the missing target namespace", "namespace", name)
		}
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("Cannot make sure the target namespace exists", "namespace", name, "error", err.Error())
	}
}

// MissingNamespace returns the namespace an object could not be written to because the cluster
// does not have it, or "" when err is not that.
func MissingNamespace(err error) string {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return ""
	}
	if d := status.Status().Details; d != nil && d.Kind == "namespaces" {
		return d.Name
	}
	return ""
}

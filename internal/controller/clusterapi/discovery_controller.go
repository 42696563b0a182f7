package clusterapi

import (
	"context"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleet"
)

// Group is Cluster API's API group.
const Group = "cluster.x-k8s.io"

// DiscoveredLabel marks the Holdfast Clusters this package made, with the value DiscoveredValue.
const (
	DiscoveredLabel = "holdfast.dev/discovered-from"
	DiscoveredValue = "cluster-api"
)

// Reconciler keeps one Holdfast Cluster per initialized Cluster API cluster.
type Reconciler struct {
	Client client.Client
	// GVK is the Cluster API Cluster kind at the version the hub serves (see ServedKind).
	GVK schema.GroupVersionKind
}

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=holdfast.dev,resources=holdfastclusters,verbs=get;list;watch;create;update;patch;delete

// ServedKind returns Cluster API's Cluster kind at the version the hub prefers, and false when
// the hub serves no Cluster API.
func ServedKind(mapper meta.RESTMapper) (schema.GroupVersionKind, bool) {
	m, err := mapper.RESTMapping(schema.GroupKind{Group: Group, Kind: "Cluster"})
	if err != nil {
		return schema.GroupVersionKind{}, false
	}
	return m.GroupVersionKind, true
}

// SetupWithManager watches Cluster API clusters and the Holdfast Clusters made from them.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	source := &unstructured.Unstructured{}
	source.SetGroupVersionKind(r.GVK)
	return ctrl.NewControllerManagedBy(mgr).
		Named("clusterapi-discovery").
		For(source).
		Watches(&holdfastv1.Cluster{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetLabels()[DiscoveredLabel] == DiscoveredValue
		}))).
		WithOptions(opts).
		Complete(r)
}

// Reconcile makes, updates or deletes the Holdfast Cluster of one Cluster API cluster.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	capi := &unstructured.Unstructured{}
	capi.SetGroupVersionKind(r.GVK)
	err := r.Client.Get(ctx, req.NamespacedName, capi)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("reading Cluster API cluster %s: %w", req, err)
	}
	gone := apierrors.IsNotFound(err) || !capi.GetDeletionTimestamp().IsZero()

	target := &holdfastv1.Cluster{}
	err = r.Client.Get(ctx, req.NamespacedName, target)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("reading Cluster %s: %w", req, err)
	}
	exists := err == nil
	if exists && target.Labels[DiscoveredLabel] != DiscoveredValue {
		log.Info("A Cluster of that name was made by hand; leaving it alone", "cluster", klog.KObj(target))
		return ctrl.Result{}, nil
	}
	switch {
	case gone:
		if !exists {
			return ctrl.Result{}, nil
		}
		log.Info("Cluster API cluster gone; removing its Holdfast Cluster", "cluster", klog.KObj(target))
		return ctrl.Result{}, client.IgnoreNotFound(r.Client.Delete(ctx, target))
	case !exists && !initialized(capi):
		// Its kubeconfig Secret comes with its control plane; its status change brings it back.
		return ctrl.Result{}, nil
	case !exists:
		target = &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}
		describe(capi, target)
		log.Info("Cluster API cluster initialized; adding it as a target", "cluster", klog.KObj(target))
		return ctrl.Result{}, client.IgnoreAlreadyExists(r.Client.Create(ctx, target))
	}
	before := target.DeepCopy()
	describe(capi, target)
	if equality.Semantic.DeepEqual(before, target) {
		return ctrl.Result{}, nil
	}
	if err := r.Client.Patch(ctx, target, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating Cluster %s: %w", klog.KObj(target), err)
	}
	return ctrl.Result{}, nil
}

// describe gives target the Cluster API cluster's labels, the discovery mark and the kubeconfig
// Secret Cluster API writes.
func describe(capi *unstructured.Unstructured, target *holdfastv1.Cluster) {
	labels := maps.Clone(capi.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	labels[DiscoveredLabel] = DiscoveredValue
	target.Labels = labels
	target.Spec.KubeconfigSecretRef = holdfastv1.SecretKeyReference{Name: fleet.KubeconfigSecretName(capi.GetName()), Key: "value"}
}

// initialized reports whether the Cluster API cluster's control plane is up, as its v1beta2
// status (status.initialization.controlPlaneInitialized), its v1beta1 status
// (status.controlPlaneReady) or its ControlPlaneInitialized or Available condition says.
func initialized(capi *unstructured.Unstructured) bool {
	if v, ok, _ := unstructured.NestedBool(capi.Object, "status", "initialization", "controlPlaneInitialized"); ok && v {
		return true
	}
	if v, ok, _ := unstructured.NestedBool(capi.Object, "status", "controlPlaneReady"); ok && v {
		return true
	}
	conds, _, _ := unstructured.NestedSlice(capi.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if (m["type"] == "ControlPlaneInitialized" || m["type"] == "Available") && m["status"] == "True" {
			return true
		}
	}
	return false
}

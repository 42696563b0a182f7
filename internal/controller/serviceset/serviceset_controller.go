package serviceset

import (
	"context"
	"fmt"
	"maps"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller/interrupt"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/tenancy"
)

// Reconciler runs each ServiceSet as a MultiClusterService limited to the ServiceSet's
// namespace, and copies its status back.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Tenancy says which ServiceAccount a ServiceSet acts as on its targets.
	Tenancy tenancy.Policy
}

// +kubebuilder:rbac:groups=holdfast.dev,resources=servicesets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=holdfast.dev,resources=servicesets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=holdfast.dev,resources=servicesets/finalizers,verbs=update
// +kubebuilder:rbac:groups=holdfast.dev,resources=multiclusterservices,verbs=get;list;watch;create;update;patch;delete

// scope is what one reconcile learned; the deferred status patch computes everything from it.
type scope struct {
	ss     *holdfastv1.ServiceSet
	before *holdfastv1.ServiceSet
	// mcs is the MultiClusterService run for the ServiceSet, as last written or read.
	mcs *holdfastv1.MultiClusterService
	// refused names what the ServiceSet may not reach (tenancy.ServiceSet), or another
	// MultiClusterService holding the name.
	refused  error
	deleting bool
}

// Reconcile keeps the ServiceSet's MultiClusterService as the ServiceSet declares, and writes the
// status once, at the end.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	ss := &holdfastv1.ServiceSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, ss); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	s := &scope{ss: ss, before: ss.DeepCopy()}
	defer interrupt.Finish(ctx, &res, &retErr, func(ctx context.Context) error { return r.patchStatus(ctx, s) })

	if !ss.DeletionTimestamp.IsZero() {
		s.deleting = true
		return ctrl.Result{}, r.reconcileDelete(ctx, s)
	}
	if controllerutil.AddFinalizer(ss, holdfastv1.CleanupFinalizer) {
		if err := r.Client.Update(ctx, ss); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding the finalizer to ServiceSet %s/%s: %w", ss.Namespace, ss.Name, err)
		}
		s.before.ResourceVersion, s.before.Finalizers = ss.ResourceVersion, ss.Finalizers
	}
	current, err := r.current(ctx, ss)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.mcs = current
	if s.refused = r.Tenancy.ServiceSet(ss); s.refused != nil {
		// Refused as a whole: what runs already stays as it was, nothing new reaches a cluster.
		return ctrl.Result{}, nil
	}
	if current != nil && tenancy.TenantOf(current) != ss.Namespace {
		s.refused = fmt.Errorf("MultiClusterService %s exists and is not this ServiceSet's: rename the ServiceSet or have a platform admin delete it", current.Name)
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.write(ctx, s, current, r.desired(ss))
}

// MultiClusterServiceName names the MultiClusterService run for a ServiceSet:
// "<namespace>.<name>" (a namespace holds no dot, so names never collide), shortened with a
// hash when too long.
func MultiClusterServiceName(namespace, name string) string {
	return naming.StatusName(namespace, name)
}

// current reads the ServiceSet's MultiClusterService, or nil when there is none.
func (r *Reconciler) current(ctx context.Context, ss *holdfastv1.ServiceSet) (*holdfastv1.MultiClusterService, error) {
	mcs := &holdfastv1.MultiClusterService{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: MultiClusterServiceName(ss.Namespace, ss.Name)}, mcs)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the MultiClusterService of ServiceSet %s/%s: %w", ss.Namespace, ss.Name, err)
	}
	return mcs, nil
}

// desired is the MultiClusterService the ServiceSet runs as: its spec, selecting only in the
// ServiceSet's namespace, acting as the ServiceAccount the tenancy policy gives it, labelled with
// that namespace (which package tenancy enforces on every use) and with the ServiceSet's own
// labels (which AlertRules select by), and carrying its requests.
func (r *Reconciler) desired(ss *holdfastv1.ServiceSet) *holdfastv1.MultiClusterService {
	labels := maps.Clone(ss.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[holdfastv1.TenantNamespaceLabel] = ss.Namespace
	labels[holdfastv1.ServiceSetLabel] = naming.LabelValue(ss.Name)
	mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{
		Name:   MultiClusterServiceName(ss.Namespace, ss.Name),
		Labels: labels,
	}}
	mcs.Spec = *ss.Spec.DeepCopy()
	mcs.Spec.ClusterSelector.Namespaces = []string{ss.Namespace}
	mcs.Spec.ServiceAccount = r.Tenancy.ServiceAccount(ss)
	for _, k := range requests {
		if v, ok := ss.Annotations[k]; ok {
			metav1.SetMetaDataAnnotation(&mcs.ObjectMeta, k, v)
		}
	}
	return mcs
}

// requests are the annotations a tenant sets on its ServiceSet to ask something of the
// MultiClusterService it runs as, which tenants may not write: a correction, and its rollout's
// resume, abort and approval (with the approver the hub's admission policy stamped on the
// ServiceSet; the policy leaves the MultiClusterServices of ServiceSets alone, which only
// Holdfast writes).
var requests = []string{
	holdfastv1.ReconcileRequestedAtAnnotation, holdfastv1.RolloutResumeAnnotation, holdfastv1.RolloutAbortAnnotation,
	holdfastv1.RolloutApproveAnnotation, holdfastv1.RolloutApprovedByAnnotation,
}

// write creates the MultiClusterService or brings it in line with the ServiceSet.
func (r *Reconciler) write(ctx context.Context, s *scope, current, want *holdfastv1.MultiClusterService) error {
	if current == nil {
		if err := r.Client.Create(ctx, want); err != nil {
			return fmt.Errorf("creating MultiClusterService %s for ServiceSet %s/%s: %w", want.Name, s.ss.Namespace, s.ss.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("Running ServiceSet", "multiClusterService", want.Name)
		s.mcs = want
		return nil
	}
	updated := current.DeepCopy()
	updated.Spec = want.Spec
	if updated.Labels == nil {
		updated.Labels = map[string]string{}
	}
	maps.Copy(updated.Labels, want.Labels)
	if len(want.Annotations) > 0 { // the requests (desired), set or changed, never removed
		if updated.Annotations == nil {
			updated.Annotations = map[string]string{}
		}
		maps.Copy(updated.Annotations, want.Annotations)
	}
	if reflect.DeepEqual(updated.Spec, current.Spec) && reflect.DeepEqual(updated.Labels, current.Labels) &&
		reflect.DeepEqual(updated.Annotations, current.Annotations) {
		return nil
	}
	if err := r.Client.Update(ctx, updated); err != nil {
		return fmt.Errorf("updating MultiClusterService %s for ServiceSet %s/%s: %w", updated.Name, s.ss.Namespace, s.ss.Name, err)
	}
	s.mcs = updated
	return nil
}

// reconcileDelete deletes the MultiClusterService (which withdraws or orphans the services, per
// its deletion policy) and lets the ServiceSet go once it is gone.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) error {
	if !controllerutil.ContainsFinalizer(s.ss, holdfastv1.CleanupFinalizer) {
		return nil
	}
	current, err := r.current(ctx, s.ss)
	if err != nil {
		return err
	}
	s.mcs = current
	if current != nil && tenancy.TenantOf(current) == s.ss.Namespace {
		if current.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, current); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting MultiClusterService %s of ServiceSet %s/%s: %w", current.Name, s.ss.Namespace, s.ss.Name, err)
			}
		}
		return nil // its deletion is watched
	}
	controllerutil.RemoveFinalizer(s.ss, holdfastv1.CleanupFinalizer)
	if err := r.Client.Update(ctx, s.ss); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("removing the finalizer of ServiceSet %s/%s: %w", s.ss.Namespace, s.ss.Name, err))
	}
	s.before.ResourceVersion = s.ss.ResourceVersion
	return nil
}

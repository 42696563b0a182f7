package alertrule

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/alerting"
	"holdfast.dev/holdfast/internal/conditions"
)

// recheck is how often a rule is looked at again: its targets' Secrets change without an event
// the hub's cache would deliver with their data.
const recheck = 5 * time.Minute

// Reconciler reports whether an AlertRule can be used.
type Reconciler struct {
	Client client.Client
	// APIReader reads the targets' Secrets from the API server, never the cache.
	APIReader client.Reader
}

// +kubebuilder:rbac:groups=holdfast.dev,resources=alertrules,verbs=get;list;watch
// +kubebuilder:rbac:groups=holdfast.dev,resources=alertrules/status,verbs=get;update;patch

// Reconcile checks the rule and patches its status once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ar := &holdfastv1.AlertRule{}
	if err := r.Client.Get(ctx, req.NamespacedName, ar); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := ar.DeepCopy()
	reason, msg := r.check(ctx, ar)
	status := metav1.ConditionFalse
	if reason == holdfastv1.ReadyReason {
		status = metav1.ConditionTrue
	}
	conditions.Set(ar, metav1.Condition{Type: holdfastv1.ReadyCondition, Status: status, Reason: reason, Message: msg})
	ar.Status.ObservedGeneration = ar.Generation
	if !equality.Semantic.DeepEqual(before.Status, ar.Status) {
		if err := r.Client.Status().Patch(ctx, ar, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("patching the status of AlertRule %s: %w", req.NamespacedName, err)
		}
	}
	return ctrl.Result{RequeueAfter: recheck}, nil
}

// check returns the rule's Ready reason and message: the first problem found, in the order of
// the spec, or that it is ready.
func (r *Reconciler) check(ctx context.Context, ar *holdfastv1.AlertRule) (string, string) {
	if _, err := alerting.Compile(ar); err != nil {
		reason := holdfastv1.SelectorInvalidReason
		if errors.Is(err, alerting.ErrInvalidExclusion) {
			reason = holdfastv1.ExclusionInvalidReason
		}
		return reason, err.Error()
	}
	for _, t := range ar.Spec.Targets {
		if _, err := alerting.ResolveTarget(ctx, r.APIReader, ar.Namespace, ar.Name, t); err != nil {
			return holdfastv1.TargetInvalidReason, err.Error()
		}
	}
	if ar.Spec.Suspend {
		return holdfastv1.SuspendedReason, "spec.suspend is true: the rule sends nothing"
	}
	return holdfastv1.ReadyReason, fmt.Sprintf("%d targets usable", len(ar.Spec.Targets))
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&holdfastv1.AlertRule{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(opts).
		Named("alertrule").
		Complete(r)
}

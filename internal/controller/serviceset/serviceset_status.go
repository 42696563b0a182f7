package serviceset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
)

// computeStatus derives the ServiceSet's status from the scope: the counts of its
// MultiClusterService and a Ready condition saying whether the ServiceSet runs as declared and
// how its clusters are. It is the only place that sets the ServiceSet's conditions.
func computeStatus(s *scope) {
	ss := s.ss
	set := func(status metav1.ConditionStatus, reason, msg string) {
		conditions.Set(ss, metav1.Condition{Type: holdfastv1.ReadyCondition, Status: status, Reason: reason, Message: msg})
	}
	current := s.mcs != nil && s.refused == nil && s.mcs.Generation > 0 && s.mcs.Status.ObservedGeneration == s.mcs.Generation
	if s.mcs != nil {
		ss.Status.MultiClusterService = s.mcs.Name
		counts := s.mcs.Status
		counts.Conditions, counts.ObservedGeneration = ss.Status.Conditions, ss.Status.ObservedGeneration
		ss.Status.MultiClusterServiceStatus = counts
	}
	switch {
	case s.deleting:
		set(metav1.ConditionFalse, holdfastv1.DeletingReason, "withdrawing: deleting MultiClusterService "+ss.Status.MultiClusterService)
	case s.refused != nil:
		set(metav1.ConditionFalse, holdfastv1.CrossNamespaceReferenceReason, s.refused.Error()+"; nothing changed until it is fixed")
	case !current:
		set(metav1.ConditionUnknown, holdfastv1.ProgressingReason, "waiting for MultiClusterService "+MultiClusterServiceName(ss.Namespace, ss.Name))
	default:
		ready := conditions.Get(s.mcs, holdfastv1.ReadyCondition)
		if ready == nil {
			set(metav1.ConditionUnknown, holdfastv1.ProgressingReason, "waiting for MultiClusterService "+s.mcs.Name)
			break
		}
		set(ready.Status, ready.Reason, ready.Message)
	}
	conditions.SetProgress(ss, *conditions.Get(ss, holdfastv1.ReadyCondition))
	if current && !s.deleting {
		ss.Status.ObservedGeneration = ss.Generation
	}
}

// patchStatus computes the status and writes it when it changed, with an Event when Ready does.
func (r *Reconciler) patchStatus(ctx context.Context, s *scope) error {
	if s.deleting && len(s.ss.Finalizers) == 0 {
		return nil // gone
	}
	computeStatus(s)
	r.recordTransition(ctx, s)
	if apiequality.Semantic.DeepEqual(s.before.Status, s.ss.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, s.ss, client.MergeFrom(s.before)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("patching the status of ServiceSet %s/%s: %w", s.ss.Namespace, s.ss.Name, err))
	}
	return nil
}

// recordTransition emits an Event and a log line when Ready changes.
func (r *Reconciler) recordTransition(ctx context.Context, s *scope) {
	before := conditions.Get(s.before, holdfastv1.ReadyCondition)
	after := conditions.Get(s.ss, holdfastv1.ReadyCondition)
	if after == nil || (before != nil && before.Status == after.Status && before.Reason == after.Reason) {
		return
	}
	ctrl.LoggerFrom(ctx).Info("ServiceSet readiness changed", "status", after.Status, "reason", after.Reason, "message", after.Message)
	if r.Recorder == nil {
		return
	}
	eventType := corev1.EventTypeNormal
	if after.Status == metav1.ConditionFalse && holdfastv1.StalledReasons[after.Reason] {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(s.ss, nil, eventType, after.Reason, "Reconcile", "%s", after.Message)
}

package multiclusterservice

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
)

// maxNamed is how many not-ready clusters the Ready message names before it says "and N more".
const maxNamed = 5

// computeStatus derives the counts and the Ready condition from the scope. It is the only place
// that sets the MultiClusterService's conditions.
func computeStatus(s *scope) {
	m := s.mcs
	st := &m.Status
	st.MatchingClusters = int32(len(s.matching))
	st.ReadyClusters, st.FailedClusters, st.DriftedClusters, st.DriftedObjects = 0, 0, 0, 0
	var notReady []string
	pending := 0
	requested := m.Annotations[holdfastv1.ReconcileRequestedAtAnnotation]
	allHandled := requested != ""
	for i := range s.statuses {
		css := &s.statuses[i]
		if css.Status.LastHandledReconcileAt != requested {
			allHandled = false
		}
		if css.Status.DriftedCount > 0 {
			st.DriftedClusters++
			st.DriftedObjects += css.Status.DriftedCount
		}
		ready := conditions.Get(css, holdfastv1.ReadyCondition)
		switch {
		case ready == nil || (ready.Status == metav1.ConditionTrue && css.Status.ObservedServiceSetGeneration != m.Generation):
			// Ready for an older declaration says nothing about this one.
			pending++
			notReady = append(notReady, css.Spec.Cluster+" (not reconciled yet)")
		case ready.Status == metav1.ConditionTrue:
			st.ReadyClusters++
		default:
			if ready.Status == metav1.ConditionFalse && holdfastv1.NeedsAttention(ready.Reason) {
				st.FailedClusters++
			}
			notReady = append(notReady, fmt.Sprintf("%s (%s)", css.Spec.Cluster, ready.Reason))
		}
	}
	if allHandled && !s.deleting {
		st.LastHandledReconcileAt = requested
	}
	sort.Strings(notReady)

	set := func(status metav1.ConditionStatus, reason, msg string) {
		conditions.Set(m, metav1.Condition{Type: holdfastv1.ReadyCondition, Status: status, Reason: reason, Message: msg})
	}
	switch {
	case s.deleting:
		set(metav1.ConditionFalse, holdfastv1.DeletingReason,
			fmt.Sprintf("withdrawing from %d clusters (deletionPolicy %s)", len(s.statuses), m.Spec.DeletionPolicy))
	case s.invalid != nil:
		set(metav1.ConditionFalse, holdfastv1.InvalidSelectorReason, s.invalid.Error())
	case m.Spec.Paused:
		set(metav1.ConditionFalse, holdfastv1.PausedReason, "spec.paused is true: no cluster is changed")
	case len(s.matching) == 0:
		set(metav1.ConditionTrue, holdfastv1.NoMatchingClustersReason, "no Cluster matches spec.clusterSelector")
	case int(st.ReadyClusters) == len(s.matching):
		set(metav1.ConditionTrue, holdfastv1.ClustersReadyReason, fmt.Sprintf("%d of %d clusters ready", st.ReadyClusters, len(s.matching)))
	case pending == len(notReady):
		set(metav1.ConditionUnknown, holdfastv1.ProgressingReason, fmt.Sprintf("%d of %d clusters ready; waiting for %s",
			st.ReadyClusters, len(s.matching), nameSome(notReady)))
	default:
		set(metav1.ConditionFalse, holdfastv1.ClustersNotReadyReason, fmt.Sprintf("%d of %d clusters ready; not ready: %s",
			st.ReadyClusters, len(s.matching), nameSome(notReady)))
	}
	conditions.SetProgress(m, *conditions.Get(m, holdfastv1.ReadyCondition))
	setHealthy(s)
	if s.invalid == nil && !s.deleting {
		st.ObservedGeneration = m.Generation
	}
}

// setHealthy counts the clusters whose status object is Healthy and sets the service set's
// Healthy condition: True when every matching cluster's is, False when one's is False (naming
// the clusters, and why the first one is not healthy), Unknown while some are progressing.
func setHealthy(s *scope) {
	m := s.mcs
	st := &m.Status
	st.HealthyClusters = 0
	type notHealthy struct{ cluster, reason, message string }
	var unhealthy []notHealthy
	var progressing []string
	for i := range s.statuses {
		css := &s.statuses[i]
		switch h := conditions.Get(css, holdfastv1.HealthyCondition); {
		case h != nil && h.Status == metav1.ConditionTrue:
			st.HealthyClusters++
		case h != nil && h.Status == metav1.ConditionFalse:
			unhealthy = append(unhealthy, notHealthy{css.Spec.Cluster, h.Reason, h.Message})
		default:
			progressing = append(progressing, css.Spec.Cluster)
		}
	}
	sort.Slice(unhealthy, func(i, j int) bool { return unhealthy[i].cluster < unhealthy[j].cluster })
	sort.Strings(progressing)
	set := func(status metav1.ConditionStatus, reason, msg string) {
		conditions.Set(m, metav1.Condition{Type: holdfastv1.HealthyCondition, Status: status, Reason: reason, Message: msg})
	}
	counts := fmt.Sprintf("%d of %d clusters healthy", st.HealthyClusters, len(s.matching))
	switch {
	case len(unhealthy) > 0:
		names := make([]string, len(unhealthy))
		for i, u := range unhealthy {
			names[i] = fmt.Sprintf("%s (%s)", u.cluster, u.reason)
		}
		set(metav1.ConditionFalse, holdfastv1.UnhealthyReason, fmt.Sprintf("%s; not healthy: %s; %s: %s",
			counts, nameSome(names), unhealthy[0].cluster, unhealthy[0].message))
	case int(st.HealthyClusters) >= len(s.matching):
		set(metav1.ConditionTrue, holdfastv1.HealthyReason, counts)
	default:
		set(metav1.ConditionUnknown, holdfastv1.ProgressingReason, fmt.Sprintf("%s; waiting for %s", counts, nameSome(progressing)))
	}
}

func nameSome(names []string) string {
	if len(names) <= maxNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamed], ", "), len(names)-maxNamed)
}

// recordTransition emits an Event and a log line when Ready changes.
func (r *Reconciler) recordTransition(ctx context.Context, s *scope) {
	before := conditions.Get(s.before, holdfastv1.ReadyCondition)
	after := conditions.Get(s.mcs, holdfastv1.ReadyCondition)
	if after == nil || (before != nil && before.Status == after.Status && before.Reason == after.Reason) {
		return
	}
	ctrl.LoggerFrom(ctx).Info("MultiClusterService readiness changed", "status", after.Status, "reason", after.Reason, "message", after.Message)
	if r.Recorder == nil {
		return
	}
	eventType := corev1.EventTypeNormal
	if after.Status == metav1.ConditionFalse && holdfastv1.NeedsAttention(after.Reason) {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(s.mcs, nil, eventType, after.Reason, "Reconcile", "%s", after.Message)
}

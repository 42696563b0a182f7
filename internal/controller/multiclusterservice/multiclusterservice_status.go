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
	switch {
	case m.Spec.Rollout == nil:
		st.Rollout = nil
	case s.plan != nil:
		st.Rollout = &s.plan.Status
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
	case s.revisionErr != nil:
		set(metav1.ConditionFalse, holdfastv1.RevisionFailedReason, "the revision of the services cannot be made, so no cluster changes: "+s.revisionErr.Error())
	case len(s.taken) > 0:
		set(metav1.ConditionFalse, holdfastv1.StatusNameTakenReason, takenMessage(m.Name, s.taken))
	case st.Rollout != nil && st.Rollout.Phase != holdfastv1.RolloutComplete:
		setRolloutReady(m.Name, st.Rollout, set)
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

// setRolloutReady words the Ready condition of a service set whose rollout is not complete:
// Unknown while it goes through the waves, False when halted (naming the failed clusters and
// why) or aborted.
func setRolloutReady(name string, ro *holdfastv1.RolloutStatus, set func(metav1.ConditionStatus, string, string)) {
	wave := ""
	if int(ro.Wave) < len(ro.Waves) {
		w := ro.Waves[ro.Wave]
		wave = fmt.Sprintf("wave %d of %d (%s): %d of %d clusters updated, %d healthy",
			ro.Wave+1, len(ro.Waves), w.Name, w.Updated, w.Clusters, w.Healthy)
	}
	switch ro.Phase {
	case holdfastv1.RolloutHalted:
		failed := make([]string, 0, len(ro.FailedClusters))
		for _, f := range ro.FailedClusters {
			if !f.Resumed {
				failed = append(failed, fmt.Sprintf("%s (%s: %s)", f.Cluster, f.Reason, f.Message))
			}
		}
		set(metav1.ConditionFalse, holdfastv1.RolloutHaltedReason, fmt.Sprintf(
			"rollout of revision %s halted at %s; %d clusters failed: %s; `holdfast rollout resume %s` goes on, `holdfast rollout abort` goes back to %s",
			ro.Revision, wave, ro.Failures, nameSome(failed), name, ro.StableRevision))
	case holdfastv1.RolloutPreviewing, holdfastv1.RolloutPreviewed:
		previewed, clusters := int32(0), int32(0)
		if p := ro.Preview; p != nil {
			previewed, clusters = p.Previewed, p.Clusters
		}
		set(metav1.ConditionUnknown, holdfastv1.AwaitingApprovalReason, fmt.Sprintf(
			"revision %s awaits approval, previewed on %d of %d clusters: `holdfast diff %s` shows what it changes, `holdfast rollout approve %s` lets it go ahead",
			ro.Revision, previewed, clusters, name, name))
	case holdfastv1.RolloutAborted:
		set(metav1.ConditionFalse, holdfastv1.RolloutAbortedReason, fmt.Sprintf(
			"rollout of revision %s aborted: every cluster is back on revision %s until the services change", ro.Revision, ro.StableRevision))
	default:
		set(metav1.ConditionUnknown, holdfastv1.RollingOutReason, fmt.Sprintf("rolling out revision %s: %s", ro.Revision, wave))
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

// takenMessage says which matching Clusters this service set cannot serve, whose status object
// holds the name theirs needs, and what to rename.
func takenMessage(set string, taken []nameTaken) string {
	named := make([]string, len(taken))
	for i, t := range taken {
		named[i] = fmt.Sprintf("Cluster %s: ClusterServiceStatus %s is MultiClusterService %s's for Cluster %s/%s",
			t.cluster, t.status, t.otherSet, t.status.Namespace, t.otherOnto)
	}
	sort.Strings(named)
	return fmt.Sprintf("not served: %s (status objects are named <service set>.<cluster>, and a dot in either name can make "+
		"two pairs meet); rename this service set or the Cluster", nameSome(named))
}

func nameSome(names []string) string {
	if len(names) <= maxNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamed], ", "), len(names)-maxNamed)
}

// recordTransition emits an Event and a log line when Ready changes, and when the rollout
// starts a revision or a wave.
func (r *Reconciler) recordTransition(ctx context.Context, s *scope) {
	r.recordRollout(ctx, s)
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

// recordRollout emits a Normal Event and a log line when the rollout starts a revision, moves to
// another wave or completes (a halt makes Ready False, which recordTransition reports).
func (r *Reconciler) recordRollout(ctx context.Context, s *scope) {
	before, after := s.before.Status.Rollout, s.mcs.Status.Rollout
	if after == nil || after.Phase == holdfastv1.RolloutHalted || after.Phase == holdfastv1.RolloutAborted ||
		(before != nil && before.Revision == after.Revision && before.Wave == after.Wave && before.Phase == after.Phase) {
		return
	}
	var reason, msg string
	switch {
	case after.Phase == holdfastv1.RolloutComplete:
		if before == nil {
			return // the first revision: nothing was rolled out
		}
		reason, msg = "RolloutComplete", fmt.Sprintf("every cluster has revision %s", after.Revision)
	case after.Phase == holdfastv1.RolloutPausing:
		reason, msg = "RolloutPausing", fmt.Sprintf("wave %s is healthy with revision %s; the next starts after the pause", after.Waves[after.Wave].Name, after.Revision)
	case int(after.Wave) < len(after.Waves):
		w := after.Waves[after.Wave]
		reason, msg = "RolloutWave", fmt.Sprintf("revision %s: wave %d of %d (%s, %d clusters) takes it", after.Revision, after.Wave+1, len(after.Waves), w.Name, w.Clusters)
	default:
		return
	}
	ctrl.LoggerFrom(ctx).Info("Rollout progressed", "reason", reason, "revision", after.Revision, "wave", after.Wave)
	if r.Recorder != nil {
		r.Recorder.Eventf(s.mcs, nil, corev1.EventTypeNormal, reason, "Rollout", "%s", msg)
	}
}

package clusterservicestatus

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/drift"
)

// maxListed bounds how many objects a condition message names.
const maxListed = 5

var readySummary = conditions.Summary{
	Negative: []string{holdfastv1.PausedCondition, holdfastv1.ContestedCondition, holdfastv1.DriftedCondition},
	Positive: []string{holdfastv1.TargetClusterReadyCondition, holdfastv1.RenderedCondition, holdfastv1.AppliedCondition, holdfastv1.HealthyCondition},
}

// computeStatus derives the whole status from the scope. It is the only place that sets the
// ClusterServiceStatus's conditions.
func computeStatus(s *scope) {
	st := &s.css.Status
	var health healthSummary
	if s.deployed {
		st.Resources = s.resources
		st.Services = serviceStatuses(s)
		health = s.healthOf(st.Resources)
		var recorded []holdfastv1.ServiceStatus
		if s.part != nil {
			recorded = s.before.Status.Services
		}
		setServiceHealth(st.Services, health, recorded)
		st.SyncMode = s.mcs.Spec.SyncMode
		if s.requested != "" {
			st.LastHandledReconcileAt, st.HandledRequests = s.requested, s.handled
		}
	} else if s.deleting && s.resources != nil {
		st.Resources = s.resources
	}
	if s.ran {
		now := metav1.NewTime(s.now)
		st.LastFullReconcileTime = &now
		st.ObservedServiceSetGeneration = s.mcs.Generation
		st.Revision = s.deployedRevision()
	}
	st.ObservedGeneration = s.css.Generation
	if s.preview != nil {
		st.Preview = s.preview
	}
	if s.inventoryProblem == nil {
		// Not from a partial inventory: the counts stay as they were.
		countResources(st, s.uncounted)
	}
	recordDrifts(s)

	setPaused(s)
	setClusterReady(s)
	setRendered(s)
	setApplied(s)
	setHealthy(s, health)
	setDrifted(s)
	setContested(s)
	setAdmissionConditions(s)
	if s.deleting {
		ready := metav1.Condition{Type: holdfastv1.ReadyCondition, Status: metav1.ConditionFalse,
			Reason: holdfastv1.DeletingReason, Message: fmt.Sprintf("withdrawing %d objects (cleanupPolicy %s)", len(st.Resources), s.css.Spec.CleanupPolicy)}
		if p := s.inventoryProblem; p != nil {
			ready.Message = "cannot withdraw: " + p.message
		}
		conditions.Set(s.css, ready)
		conditions.SetProgress(s.css, ready)
	} else {
		conditions.SetReady(s.css, readySummary)
	}
	if s.ran && s.mcs.Spec.SyncMode != holdfastv1.SyncModeDryRun &&
		conditions.IsTrue(s.css, holdfastv1.RenderedCondition) && conditions.IsTrue(s.css, holdfastv1.AppliedCondition) {
		// Provisioned is a one-way milestone: never set back.
		st.Initialization = &holdfastv1.ClusterServiceStatusInitialization{Provisioned: ptr.To(true)}
	}
}

// countResources counts the entries of st.Resources by state, with uncounted InSync entries it
// leaves out (a part of the inventory, inventory_part.go).
func countResources(st *holdfastv1.ClusterServiceStatusStatus, uncounted int) {
	st.ResourceCount, st.InSyncCount = int32(len(st.Resources)+uncounted), int32(uncounted)
	st.FailedCount, st.ConflictCount, st.DriftedCount = 0, 0, 0
	for _, rs := range st.Resources {
		switch {
		case drift.Unresolved(rs.State):
			st.DriftedCount++
		case rs.State == holdfastv1.ResourceInSync:
			st.InSyncCount++
		case rs.State == holdfastv1.ResourceFailed:
			st.FailedCount++
		case rs.State == holdfastv1.ResourceConflict:
			st.ConflictCount++
		}
	}
}

func set(s *scope, t string, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(s.css, metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg})
}

// keepOrUnknown leaves a condition as the last reconcile that knew set it, or sets it Unknown
// on the first visit.
func keepOrUnknown(s *scope, t, msg string) {
	if conditions.Get(s.css, t) == nil {
		set(s, t, metav1.ConditionUnknown, holdfastv1.ProgressingReason, msg)
	}
}

func setPaused(s *scope) {
	if s.mcs != nil && s.mcs.Spec.Paused {
		set(s, holdfastv1.PausedCondition, metav1.ConditionTrue, holdfastv1.PausedReason,
			"MultiClusterService "+s.mcs.Name+" is paused: the cluster is not changed")
		return
	}
	set(s, holdfastv1.PausedCondition, metav1.ConditionFalse, holdfastv1.NotPausedReason, "")
}

func setClusterReady(s *scope) {
	if p := s.clusterProblem; p != nil {
		status := metav1.ConditionFalse
		if p.reason == holdfastv1.ClusterPausedReason {
			status = metav1.ConditionUnknown
		}
		set(s, holdfastv1.TargetClusterReadyCondition, status, p.reason, p.message)
		return
	}
	set(s, holdfastv1.TargetClusterReadyCondition, metav1.ConditionTrue, holdfastv1.ReadyReason,
		fmt.Sprintf("Cluster %s/%s is connected", s.css.Namespace, s.css.Spec.Cluster))
}

func setRendered(s *scope) {
	if p := s.revisionProblem; p != nil {
		set(s, holdfastv1.RenderedCondition, metav1.ConditionFalse, p.reason, p.message)
		return
	}
	if !s.deployed || s.corrections {
		keepOrUnknown(s, holdfastv1.RenderedCondition, "services not rendered yet")
		return
	}
	var failed []*problem
	for _, o := range s.services {
		if o.renderErr != nil {
			failed = append(failed, o.renderErr)
		}
	}
	if len(failed) == 0 {
		set(s, holdfastv1.RenderedCondition, metav1.ConditionTrue, holdfastv1.RenderedReason,
			fmt.Sprintf("%d services rendered", len(s.services))+unkeptNote(s.unkept))
		return
	}
	msgs := make([]string, 0, len(failed))
	for _, p := range failed {
		msgs = append(msgs, p.message)
	}
	set(s, holdfastv1.RenderedCondition, metav1.ConditionFalse, failed[0].reason,
		fmt.Sprintf("%d of %d services did not render: %s", len(failed), len(s.services), strings.Join(msgs, "; "))+unkeptNote(s.unkept))
}

func setApplied(s *scope) {
	if p := s.inventoryProblem; p != nil {
		set(s, holdfastv1.AppliedCondition, metav1.ConditionFalse, p.reason, p.message)
		return
	}
	if !s.deployed {
		keepOrUnknown(s, holdfastv1.AppliedCondition, "services not applied yet")
		return
	}
	var failed, conflicts, would []string
	applied, total, kept := 0, 0, 0
	var applyErrs []string
	var waiting, invalid []string
	invalidReason := ""
	for _, o := range s.services {
		if o.kept {
			kept++
			continue
		}
		if o.waiting != nil {
			msg := fmt.Sprintf("service %q %s", o.name, strings.TrimPrefix(o.waiting.message, "dependsOn "))
			if o.waiting.reason != holdfastv1.WaitingForDependenciesReason {
				// InvalidDependency, or CrossNamespaceReference: the first one's reason.
				invalid = append(invalid, msg)
				invalidReason = firstNonEmpty(invalidReason, o.waiting.reason)
			} else {
				waiting = append(waiting, msg)
			}
			continue
		}
		if o.applyErr != nil {
			applyErrs = append(applyErrs, fmt.Sprintf("service %q: %v", o.name, o.applyErr))
			continue
		}
		a, t := o.tally()
		applied, total = applied+a, total+t
		f, c, w := o.objectsNotApplied()
		failed, conflicts, would = append(failed, f...), append(conflicts, c...), append(would, w...)
	}
	if s.withdrawErr != nil {
		applyErrs = append(applyErrs, apply.Describe(s.withdrawErr))
	}
	switch {
	case len(applyErrs) > 0:
		set(s, holdfastv1.AppliedCondition, metav1.ConditionFalse, holdfastv1.ApplyFailedReason,
			strings.Join(applyErrs, "; ")+" (retrying)")
	case len(failed) > 0:
		set(s, holdfastv1.AppliedCondition, metav1.ConditionFalse, holdfastv1.ApplyFailedReason,
			fmt.Sprintf("%d of %d objects applied; failed: %s", applied, total, list(failed)))
	case len(conflicts) > 0:
		set(s, holdfastv1.AppliedCondition, metav1.ConditionFalse, holdfastv1.ConflictReason,
			fmt.Sprintf("%d objects not applied: %s", len(conflicts), list(conflicts)))
	case len(invalid) > 0:
		set(s, holdfastv1.AppliedCondition, metav1.ConditionFalse, invalidReason, list(invalid))
	case len(waiting) > 0:
		set(s, holdfastv1.AppliedCondition, metav1.ConditionUnknown, holdfastv1.WaitingForDependenciesReason, list(waiting))
	case s.mcs.Spec.SyncMode == holdfastv1.SyncModeDryRun:
		msg := "DryRun: nothing would change"
		if len(would) > 0 {
			msg = fmt.Sprintf("DryRun, nothing changed: %s", list(would))
		}
		set(s, holdfastv1.AppliedCondition, metav1.ConditionFalse, holdfastv1.DryRunReason, msg)
	case kept > 0 && kept == len(s.services):
		set(s, holdfastv1.AppliedCondition, metav1.ConditionTrue, holdfastv1.OneTimeDoneReason,
			"OneTime: every service was deployed once and is left alone")
	default:
		set(s, holdfastv1.AppliedCondition, metav1.ConditionTrue, holdfastv1.AppliedReason,
			fmt.Sprintf("%d objects in sync", s.css.Status.InSyncCount))
	}
}

// objectsNotApplied describes the objects of a service an apply did not write: those that
// failed, those in conflict (another service set's, or not created by Holdfast), and those a
// dry run would change.
func (o serviceOutcome) objectsNotApplied() (failed, conflicts, would []string) {
	if o.result == nil {
		return nil, nil, nil
	}
	for _, r := range o.result.Objects {
		switch r.Action {
		case apply.Failed:
			failed = append(failed, fmt.Sprintf("%s (service %q): %s", r.Ref, o.name, firstNonEmpty(r.Message, errString(r.Err))))
		case apply.Conflict:
			if r.Foreign {
				conflicts = append(conflicts, fmt.Sprintf("%s (service %q) exists on the cluster and Holdfast did not create it "+
					"(delete it there, or set spec.adoption to Adopt)", r.Ref, o.name))
				break
			}
			conflicts = append(conflicts, fmt.Sprintf("%s (service %q) is owned by MultiClusterService %s", r.Ref, o.name, r.ConflictWith))
		case apply.WouldCreate, apply.WouldUpdate, apply.WouldDelete:
			would = append(would, fmt.Sprintf("%s %s", r.Action, r.Ref))
		}
	}
	return failed, conflicts, would
}

// serviceStatuses describes each declared service after this reconcile.
func serviceStatuses(s *scope) []holdfastv1.ServiceStatus {
	prev := map[string]holdfastv1.ServiceStatus{}
	for _, ps := range s.css.Status.Services {
		prev[ps.Name] = ps
	}
	now := metav1.NewTime(s.now)
	out := make([]holdfastv1.ServiceStatus, 0, len(s.services))
	for _, o := range s.services {
		p := prev[o.name]
		st := holdfastv1.ServiceStatus{Name: o.name, Revision: p.Revision, LastAppliedTime: p.LastAppliedTime, RevisionTime: p.RevisionTime, Objects: int32(o.objects),
			Overrides: o.overrides}
		if s.corrections {
			// The declarations corrections use come from memory, which does not say which
			// overrides made them: the same as at the last full reconcile.
			st.Overrides = p.Overrides
		}
		switch {
		case o.waiting != nil:
			st.Ready, st.Reason, st.Message = metav1.ConditionFalse, o.waiting.reason, o.waiting.message
			st.Objects = p.Objects
		case o.renderErr != nil:
			st.Ready, st.Reason, st.Message = metav1.ConditionFalse, o.renderErr.reason, o.renderErr.message
			st.Objects = p.Objects
		case o.kept:
			st.Ready, st.Reason, st.Message = metav1.ConditionTrue, holdfastv1.OneTimeDoneReason, "deployed once; left alone (OneTime)"
			st.Objects = p.Objects
		case o.unchanged:
			st = p
		case o.applyErr != nil:
			st.Ready, st.Reason, st.Message = metav1.ConditionFalse, holdfastv1.ApplyFailedReason, apply.Describe(o.applyErr)
		default:
			st.Ready, st.Reason, st.Message = serviceReadiness(s, o)
			if st.Ready == metav1.ConditionTrue {
				if st.Revision != o.revision || st.RevisionTime == nil {
					st.RevisionTime = &now
				}
				st.Revision, st.LastAppliedTime = o.revision, &now
			}
		}
		out = append(out, st)
	}
	return out
}

func serviceReadiness(s *scope, o serviceOutcome) (metav1.ConditionStatus, string, string) {
	var failed, conflicts, foreign int
	for _, r := range o.result.Objects {
		switch {
		case r.Action == apply.Failed:
			failed++
		case r.Action == apply.Conflict && r.Foreign:
			foreign++
		case r.Action == apply.Conflict:
			conflicts++
		}
	}
	switch {
	case failed > 0:
		_, total := o.tally()
		return metav1.ConditionFalse, holdfastv1.ApplyFailedReason, fmt.Sprintf("%d of %d objects failed", failed, total)
	case conflicts > 0:
		return metav1.ConditionFalse, holdfastv1.ConflictReason, fmt.Sprintf("%d objects owned by another MultiClusterService", conflicts)
	case foreign > 0:
		return metav1.ConditionFalse, holdfastv1.ConflictReason,
			fmt.Sprintf("%d objects exist on the cluster and Holdfast did not create them (adoption %s)", foreign, adoptionOf(s.mcs))
	case s.mcs.Spec.SyncMode == holdfastv1.SyncModeDryRun:
		return metav1.ConditionFalse, holdfastv1.DryRunReason, "DryRun: nothing applied"
	}
	return metav1.ConditionTrue, holdfastv1.AppliedReason, ""
}

func list(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:maxListed], "; "), len(items)-maxListed)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// recordTransitions emits an Event and a log line when Ready changes, and a Normal Event when
// objects were changed on the cluster.
func (r *Reconciler) recordTransitions(ctx context.Context, s *scope) {
	log := ctrl.LoggerFrom(ctx)
	changed := 0
	for _, o := range s.services {
		if o.result != nil {
			changed += o.result.Changed
		}
	}
	if corrected := correctedObjects(s); len(corrected) > 0 {
		log.Info("Drift corrected", "objects", corrected)
		if r.Recorder != nil {
			r.Recorder.Eventf(s.css, nil, corev1.EventTypeNormal, "DriftCorrected", "Correct", "%s", list(corrected))
		}
		changed -= len(corrected)
	}
	r.recordDriftEvents(ctx, s)
	for _, o := range recreatedDeclarations(s) {
		log.Info("Re-created object: its declared change needs immutable fields changed", "object", o.Ref.String(), "fields", o.ImmutableFields)
		if r.Recorder != nil {
			r.Recorder.Eventf(s.css, nil, corev1.EventTypeNormal, "Recreated", "Apply",
				"%s deleted and created again: its declared change needs immutable fields changed (%s), and drift.immutable.action is Recreate",
				o.Ref, strings.Join(o.ImmutableFields, ", "))
		}
	}
	if changed > 0 {
		log.Info("Cluster changed", "objects", changed)
		if r.Recorder != nil {
			r.Recorder.Eventf(s.css, nil, corev1.EventTypeNormal, "Applied", "Apply", "%d objects created, updated or deleted", changed)
		}
	}
	before := conditions.Get(s.before, holdfastv1.ReadyCondition)
	after := conditions.Get(s.css, holdfastv1.ReadyCondition)
	if after == nil || (before != nil && before.Status == after.Status && before.Reason == after.Reason) {
		return
	}
	log.Info("Readiness changed", "status", after.Status, "reason", after.Reason, "message", after.Message)
	if r.Recorder == nil {
		return
	}
	eventType := corev1.EventTypeNormal
	if after.Status == metav1.ConditionFalse && after.Reason != holdfastv1.DryRunReason && after.Reason != holdfastv1.DeletingReason {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(s.css, nil, eventType, after.Reason, "Reconcile", "%s", after.Message)
}

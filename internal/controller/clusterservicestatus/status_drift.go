package clusterservicestatus

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
)

// At the status patch: the Drifted and Contested conditions (computeStatus), and, once the
// status is written, the Events about drift (recordTransitions).

// setDrifted: True while objects differ from the declaration and wait (Report mode, or
// Contested); False/InSync otherwise; Unknown with InvalidDriftPolicy when the policy cannot be
// used as written.
func setDrifted(s *scope) {
	if s.mcs == nil || s.mcs.Spec.SyncMode != holdfastv1.SyncModeContinuousWithDriftDetection {
		set(s, holdfastv1.DriftedCondition, metav1.ConditionFalse, holdfastv1.DriftDetectionOffReason,
			"drift is watched only in ContinuousWithDriftDetection mode")
		return
	}
	if len(s.policyProblems) > 0 {
		set(s, holdfastv1.DriftedCondition, metav1.ConditionUnknown, holdfastv1.InvalidDriftPolicyReason,
			"fix the MultiClusterService's drift policy: "+list(dedupe(s.policyProblems)))
		return
	}
	var drifted, refused []string
	for _, rs := range s.css.Status.Resources {
		switch rs.State {
		case holdfastv1.ResourceDrifted, holdfastv1.ResourceMissing:
			drifted = append(drifted, describeDrift(rs))
		case holdfastv1.ResourceUncorrectable:
			refused = append(refused, describeDrift(rs)+": "+rs.Message)
		}
	}
	if len(refused) > 0 {
		set(s, holdfastv1.DriftedCondition, metav1.ConditionTrue, holdfastv1.CorrectionFailedReason,
			fmt.Sprintf("%d objects drifted and the API server refused to put them back (fix the cause; Holdfast retries): %s",
				len(refused), list(refused)))
		return
	}
	if len(drifted) == 0 {
		if !s.deployed {
			keepOrUnknown(s, holdfastv1.DriftedCondition, "not compared with the cluster yet")
			return
		}
		set(s, holdfastv1.DriftedCondition, metav1.ConditionFalse, holdfastv1.InSyncReason, strings.Join(s.watchNotes, "; "))
		return
	}
	set(s, holdfastv1.DriftedCondition, metav1.ConditionTrue, holdfastv1.DriftReportedReason,
		fmt.Sprintf("%d objects drifted, waiting for a correction (holdfast correct %s, or a correction window): %s",
			len(drifted), s.mcs.Name, list(drifted)))
}

// setContested: True while objects another manager keeps reverting are Contested (corrected
// with a backoff, or not until a manual request: each object's message says which).
func setContested(s *scope) {
	var contested []string
	for _, rs := range s.css.Status.Resources {
		if rs.State == holdfastv1.ResourceContested {
			contested = append(contested, describeDrift(rs))
		}
	}
	if len(contested) == 0 {
		set(s, holdfastv1.ContestedCondition, metav1.ConditionFalse, holdfastv1.NotContestedReason, "")
		return
	}
	set(s, holdfastv1.ContestedCondition, metav1.ConditionTrue, holdfastv1.ContestedReason,
		fmt.Sprintf("%d objects keep being changed back (corrected with a backoff, or, with spec.drift.fight.action Stop, not until a manual request): %s", len(contested), list(contested)))
}

// describeDrift names an object and who changed it.
func describeDrift(rs holdfastv1.ResourceStatus) string {
	out := toRef(rs.ResourceRef).String()
	if d := rs.LastDrift; d != nil {
		switch {
		case d.Type == holdfastv1.DriftDeleted:
			out += " deleted"
		case d.Manager != "":
			out += " changed by " + d.Manager
		}
		if len(d.Fields) > 0 {
			paths := make([]string, 0, len(d.Fields))
			for _, f := range d.Fields {
				paths = append(paths, f.Path)
			}
			out += " (" + strings.Join(paths, ", ") + ")"
		}
	}
	return out
}

func dedupe(items []string) []string {
	sort.Strings(items)
	out := items[:0]
	for i, it := range items {
		if i == 0 || it != items[i-1] {
			out = append(out, it)
		}
	}
	return out
}

// correctedObjects lists the objects this reconcile put back after drift (not those someone
// else had put back already).
func correctedObjects(s *scope) []string {
	var out []string
	for _, o := range s.services {
		if o.result == nil {
			continue
		}
		for _, r := range o.result.Objects {
			if !r.Drift || !r.Applied || (r.Action != apply.Created && r.Action != apply.Configured) {
				continue
			}
			if _, ok := s.decisions.restored[unversioned(r.Ref)]; ok {
				continue // someone else put it back; the apply only took Holdfast's fields back
			}
			verb := "restored"
			if r.Action == apply.Created {
				verb = "recreated"
			}
			out = append(out, fmt.Sprintf("%s (%s)", r.Ref, verb))
		}
	}
	return out
}

// recreatedDeclarations lists the objects this reconcile deleted and created again to carry out
// a change of their declaration in immutable fields (drift.immutable.action Recreate).
func recreatedDeclarations(s *scope) []apply.ObjectResult {
	var out []apply.ObjectResult
	for _, o := range s.services {
		if o.result == nil {
			continue
		}
		for _, r := range o.result.Objects {
			if r.Recreated && !r.Drift {
				out = append(out, r)
			}
		}
	}
	return out
}

// recordDriftEvents emits a Warning for drift left waiting (newly reported in this reconcile) and
// for objects that became Contested.
func (r *Reconciler) recordDriftEvents(ctx context.Context, s *scope) {
	log := ctrl.LoggerFrom(ctx)
	var reported []string
	for _, rs := range newlyIn(s, holdfastv1.ResourceDrifted, holdfastv1.ResourceMissing) {
		reported = append(reported, describeDrift(rs))
	}
	if len(reported) > 0 {
		log.Info("Drift reported, not corrected", "objects", reported)
		if r.Recorder != nil {
			r.Recorder.Eventf(s.css, nil, corev1.EventTypeWarning, "DriftDetected", "Report", "%s", list(reported))
		}
	}
	var refused []string
	for _, rs := range newlyIn(s, holdfastv1.ResourceUncorrectable) {
		refused = append(refused, describeDrift(rs)+": "+rs.Message)
	}
	if len(refused) > 0 {
		log.Info("Drift correction refused by the API server", "objects", refused)
		if r.Recorder != nil {
			r.Recorder.Eventf(s.css, nil, corev1.EventTypeWarning, "DriftCorrectionFailed", "Correct", "%s", list(refused))
		}
	}
	for _, c := range s.decisions.contested {
		rs := holdfastv1.ResourceStatus{ResourceRef: c.ResourceRef, LastDrift: &c.DriftDetail}
		log.Info("Object contested", "object", describeDrift(rs), "message", c.message)
		if r.Recorder != nil {
			r.Recorder.Eventf(s.css, nil, corev1.EventTypeWarning, "Contested", "Correct", "%s: %s", describeDrift(rs), c.message)
		}
	}
}

func sameDrift(a, b *holdfastv1.DriftDetail) bool {
	return a == nil || b == nil || a.DetectedTime.Equal(&b.DetectedTime)
}

// newlyIn lists the objects this reconcile left in one of states that were not there before
// with the same drift: what a Warning Event and a notification are sent for once per drift, not
// per reconcile.
func newlyIn(s *scope, states ...holdfastv1.ResourceState) []holdfastv1.ResourceStatus {
	var out []holdfastv1.ResourceStatus
	for _, rs := range s.resources {
		if !slices.Contains(states, rs.State) {
			continue
		}
		if p, ok := s.previous.Of(rs.ResourceRef); ok && p.State == rs.State && sameDrift(p.LastDrift, rs.LastDrift) {
			continue
		}
		out = append(out, rs)
	}
	return out
}

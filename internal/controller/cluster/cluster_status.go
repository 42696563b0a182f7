package cluster

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/fleet"
)

var readySummary = conditions.Summary{
	Negative: []string{holdfastv1.PausedCondition},
	Positive: []string{holdfastv1.ClusterConnectedCondition},
}

// computeStatus derives the whole status from the scope. It is the only place that sets the
// Cluster's conditions.
func computeStatus(s *scope, grace, heartbeat time.Duration) {
	c := s.cluster
	now := metav1.NewTime(s.now)
	if s.probed {
		c.Status.LastProbeTime = &now
		if s.probeErr == nil {
			c.Status.LastConnectedTime = &now
			c.Status.Version = s.probe.Version
			c.Status.User = s.probe.User
			// Provisioned is a one-way milestone: never set back.
			c.Status.Initialization = &holdfastv1.ClusterInitializationStatus{Provisioned: ptr.To(true)}
		}
	}
	if s.clusterID != "" {
		c.Status.ClusterID = s.clusterID
	}
	setPaused(s)
	setConnected(s, grace)
	setAdmissionPolicies(s)
	setDuplicateRegistration(s)
	conditions.SetReady(c, readySummary)
	c.Status.ObservedGeneration = c.Generation
	throttleProbeTimes(s, heartbeat)
}

// throttleProbeTimes keeps the stored probe times when nothing else changed and they are younger
// than heartbeat, so that a healthy fleet does not write every Cluster's status on every probe.
// The grace period is judged from the in-memory time of the last success, not from these.
func throttleProbeTimes(s *scope, heartbeat time.Duration) {
	before, after := s.before.Status, s.cluster.Status
	if before.LastProbeTime == nil || s.now.Sub(before.LastProbeTime.Time) >= heartbeat {
		return
	}
	after.LastProbeTime, after.LastConnectedTime = before.LastProbeTime, before.LastConnectedTime
	if equality.Semantic.DeepEqual(before, after) {
		s.cluster.Status = after
	}
}

func setPaused(s *scope) {
	if s.paused {
		conditions.Set(s.cluster, metav1.Condition{Type: holdfastv1.PausedCondition, Status: metav1.ConditionTrue,
			Reason: holdfastv1.PausedReason, Message: "spec.paused is true: Holdfast neither connects to nor changes the cluster"})
		return
	}
	conditions.Set(s.cluster, metav1.Condition{Type: holdfastv1.PausedCondition, Status: metav1.ConditionFalse,
		Reason: holdfastv1.NotPausedReason})
}

func setConnected(s *scope, grace time.Duration) {
	c := s.cluster
	set := setter(c, holdfastv1.ClusterConnectedCondition)
	switch {
	case s.paused:
		set(metav1.ConditionUnknown, holdfastv1.PausedReason, "the cluster is not probed while paused")
	case s.connectErr != nil:
		status := metav1.ConditionFalse
		if s.connectErr.reason == holdfastv1.ProbingReason {
			status = metav1.ConditionUnknown
		}
		set(status, s.connectErr.reason, s.connectErr.message)
	case !s.probed:
		set(metav1.ConditionUnknown, holdfastv1.ProbingReason, "the cluster has not been probed yet")
	case s.probeErr == nil:
		msg := "API server " + s.probe.Version + " reachable"
		if s.probe.User != "" {
			msg += ", authenticated as " + s.probe.User
		}
		if s.agentNote != "" {
			msg += "; " + s.agentNote
		}
		set(metav1.ConditionTrue, holdfastv1.ConnectedReason, msg)
	case withinGrace(s, grace):
		// A short loss keeps the last known state so that a blip does not ripple through the fleet.
		set(metav1.ConditionTrue, holdfastv1.ConnectedReason, fmt.Sprintf(
			"last probe failed (%s: %v); still considered connected until %s after the last success at %s",
			s.probeErr.Reason, s.probeErr.Err, grace, s.lastConnected.UTC().Format(time.RFC3339)))
	default:
		set(metav1.ConditionFalse, s.probeErr.Reason, s.probeErr.Err.Error())
	}
}

// withinGrace reports whether the cluster was connected until recently.
func withinGrace(s *scope, grace time.Duration) bool {
	if s.lastConnected.IsZero() || !conditions.IsTrue(s.before, holdfastv1.ClusterConnectedCondition) {
		return false
	}
	return s.now.Sub(s.lastConnected) < grace
}

// setAdmissionPolicies says whether the cluster serves the admission policy APIs. It is not
// part of Ready: a cluster without them is served as before. Through a probe failure within
// the grace the last answer stands (it is about the same API server); otherwise it is Unknown
// until the cluster is connected and its APIs read.
func setAdmissionPolicies(s *scope) {
	c := s.cluster
	set := setter(c, holdfastv1.AdmissionPoliciesCondition)
	switch {
	case s.paused:
		set(metav1.ConditionUnknown, holdfastv1.PausedReason, "the cluster's APIs are not read while paused")
	case s.admission != nil:
		status, reason, msg := admissionPolicies(*s.admission)
		set(status, reason, msg)
	case s.admissionErr != nil:
		set(metav1.ConditionUnknown, holdfastv1.ProbingReason,
			"reading the cluster's admission policy APIs failed ("+s.admissionErr.Error()+"); read again at the next probe")
	case conditions.IsTrue(c, holdfastv1.ClusterConnectedCondition) && conditions.Get(c, holdfastv1.AdmissionPoliciesCondition) != nil:
	default:
		set(metav1.ConditionUnknown, holdfastv1.ProbingReason, "the cluster's admission policy APIs are read once it is connected")
	}
}

// admissionPolicies is the AdmissionPolicies condition for what a cluster serves: which API is
// missing, the Kubernetes version that brings it, and what Holdfast does without it.
func admissionPolicies(id fleet.Identity) (metav1.ConditionStatus, string, string) {
	var missing, without []string
	if !id.MutatingAdmissionPolicies {
		missing = append(missing, fleet.MutatingPolicyAPI.String())
		without = append(without, "drift.attribution names the field manager only, not the user")
	}
	if !id.ValidatingAdmissionPolicies {
		missing = append(missing, fleet.ValidatingPolicyAPI.String())
		without = append(without, "drift.prevention is not enforced")
	}
	if len(missing) == 0 {
		return metav1.ConditionTrue, holdfastv1.AdmissionPoliciesServedReason,
			"the cluster serves admissionregistration.k8s.io/v1 mutatingadmissionpolicies and validatingadmissionpolicies: drift attribution and prevention are available"
	}
	return metav1.ConditionFalse, holdfastv1.AdmissionPoliciesUnsupportedReason, fmt.Sprintf(
		"the cluster does not serve %s %s: %s; drift is still detected and corrected", fleet.AdmissionGroupVersion,
		strings.Join(missing, " or "), strings.Join(without, ", "))
}

// setter sets one condition of c.
func setter(c *holdfastv1.Cluster, conditionType string) func(status metav1.ConditionStatus, reason, msg string) {
	return func(status metav1.ConditionStatus, reason, msg string) {
		conditions.Set(c, metav1.Condition{Type: conditionType, Status: status, Reason: reason, Message: msg})
	}
}

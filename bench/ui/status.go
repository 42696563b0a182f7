package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Which pairs need a human: cluster i of set s waits for a correction (action Report) when
// i%waitingEvery == waitingAt and s == 0, and is Contested when i%contestedEvery == contestedAt
// and s == 1 (4 and 2 of 200 clusters).
const (
	waitingEvery, waitingAt     = 50, 7
	contestedEvery, contestedAt = 100, 42
)

// kinds are the managed objects' kinds, in the order a service's objects are made.
var kinds = []holdfastv1.ResourceRef{
	{Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Secret"}, {Group: "apps", Version: "v1", Kind: "Deployment"},
	{Version: "v1", Kind: "Service"}, {Version: "v1", Kind: "ServiceAccount"},
}

// statusOf is the status the controller would have written for cluster i of set s: every object
// applied and healthy, 10–20 objects, 0–20 drift records over the last day (each corrected
// within half a second), and for a few pairs a drift waiting for a human or a Contested object.
func statusOf(mcs *holdfastv1.MultiClusterService, generation int64, i, s int, now time.Time) holdfastv1.ClusterServiceStatusStatus {
	r := rand.New(rand.NewPCG(uint64(i), uint64(s)))
	applied := metav1.NewTime(now.Add(-time.Duration(1+r.IntN(120)) * time.Minute))
	st := holdfastv1.ClusterServiceStatusStatus{
		ObservedGeneration: generation, ObservedServiceSetGeneration: mcs.Generation, Revision: revision,
		SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection, LastFullReconcileTime: &applied,
	}
	for _, svc := range mcs.Spec.Services {
		st.Services = append(st.Services, holdfastv1.ServiceStatus{Name: svc.Name, Revision: revision, Ready: metav1.ConditionTrue,
			Reason: holdfastv1.AppliedReason, LastAppliedTime: &applied, RevisionTime: &applied, Health: holdfastv1.HealthCurrent})
	}
	for k := range 10 + r.IntN(11) {
		ref := kinds[k%len(kinds)]
		ref.Namespace, ref.Name = mcs.Name, fmt.Sprintf("%s-%s-%d", mcs.Name, strings.ToLower(ref.Kind), k/len(kinds))
		svc := mcs.Spec.Services[k%len(mcs.Spec.Services)].Name
		st.Resources = append(st.Resources, holdfastv1.ResourceStatus{ResourceRef: ref, Service: svc, State: holdfastv1.ResourceInSync, Health: holdfastv1.HealthCurrent})
	}
	for range r.IntN(holdfastv1.MaxDriftRecords + 1) {
		res := st.Resources[r.IntN(len(st.Resources))]
		detected := now.Add(-time.Duration(r.Int64N(int64(24 * time.Hour))))
		corrected := metav1.NewMicroTime(detected.Add(time.Duration(20+r.IntN(480)) * time.Millisecond))
		st.Drifts = append(st.Drifts, holdfastv1.DriftRecord{ResourceRef: res.ResourceRef, Service: res.Service,
			DriftDetail: driftOf(r, res.ResourceRef, detected), CorrectedTime: &corrected})
	}
	waiting := s == 0 && i%waitingEvery == waitingAt
	contested := s == 1 && i%contestedEvery == contestedAt
	if waiting || contested {
		k := r.IntN(len(st.Resources))
		res := &st.Resources[k]
		d := driftOf(r, res.ResourceRef, now.Add(-time.Duration(1+r.IntN(60))*time.Minute))
		res.LastDrift = &d
		res.State, res.Message = holdfastv1.ResourceDrifted, "drift found; action Report: waiting for a correction request"
		if contested {
			res.State, res.Message = holdfastv1.ResourceContested, fmt.Sprintf("%s reverted 5 corrections in 10m; corrected again with a backoff", d.Manager)
		}
		st.Drifts = append(st.Drifts, holdfastv1.DriftRecord{ResourceRef: res.ResourceRef, Service: res.Service, DriftDetail: d})
		st.DriftedCount = 1
	}
	slices.SortFunc(st.Drifts, func(a, b holdfastv1.DriftRecord) int { return a.DetectedTime.Compare(b.DetectedTime.Time) })
	if len(st.Drifts) > holdfastv1.MaxDriftRecords {
		st.Drifts = st.Drifts[len(st.Drifts)-holdfastv1.MaxDriftRecords:]
	}
	st.ResourceCount = int32(len(st.Resources))
	st.InSyncCount = st.ResourceCount - st.DriftedCount
	st.DriftCount = int64(len(st.Drifts) + r.IntN(100))
	st.Conditions = conditionsOf(generation, applied, waiting, contested)
	return st
}

// driftOf is a drift of ref detected at t: one to three field diffs, by one of managers.
func driftOf(r *rand.Rand, ref holdfastv1.ResourceRef, t time.Time) holdfastv1.DriftDetail {
	m := managers[r.IntN(len(managers))]
	d := holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Manager: m.manager, Operation: m.operation, Subresource: m.subresource,
		DetectedTime: metav1.NewMicroTime(t), Detection: holdfastv1.DriftDetectedByWatch}
	if m.manager == "" { // a deletion: the API server records no manager
		d.Type = holdfastv1.DriftDeleted
		return d
	}
	for f := range 1 + r.IntN(3) {
		var c holdfastv1.FieldChange
		switch ref.Kind {
		case "ConfigMap":
			c = holdfastv1.FieldChange{Path: fmt.Sprintf(".data.key-%d", f), Old: fmt.Sprintf(`"value-%d"`, f), New: fmt.Sprintf(`"edited-%d"`, r.IntN(1000))}
		case "Secret":
			c = holdfastv1.FieldChange{Path: fmt.Sprintf(".data.password-%d", f), Old: `"ZGVjbGFyZWQ="`, New: `"ZWRpdGVk"`}
		case "Deployment":
			c = holdfastv1.FieldChange{Path: ".spec.replicas", Old: "3", New: fmt.Sprint(1 + r.IntN(9))}
		case "Service":
			c = holdfastv1.FieldChange{Path: ".spec.ports[0].targetPort", Old: "8080", New: "9090"}
		default:
			c = holdfastv1.FieldChange{Path: fmt.Sprintf(`.metadata.labels["team-%d"]`, f), Old: `"shop"`, New: `"other"`}
		}
		d.Fields = append(d.Fields, c)
	}
	return d
}

// conditionsOf are the status object's conditions: Ready and Healthy, and Drifted and Contested
// as the pair's drift says.
func conditionsOf(generation int64, at metav1.Time, waiting, contested bool) []metav1.Condition {
	cond := func(t string, ok bool, reason, msg string) metav1.Condition {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: at, ObservedGeneration: generation}
	}
	drifted := cond(holdfastv1.DriftedCondition, false, holdfastv1.InSyncReason, "no drift")
	if waiting {
		drifted = cond(holdfastv1.DriftedCondition, true, holdfastv1.DriftReportedReason, "1 object drifted; action Report: waiting for a correction request")
	}
	contest := cond(holdfastv1.ContestedCondition, false, holdfastv1.NotContestedReason, "no object is contested")
	if contested {
		contest = cond(holdfastv1.ContestedCondition, true, holdfastv1.ContestedReason, "1 object contested by another field manager")
	}
	return []metav1.Condition{
		cond(holdfastv1.TargetClusterReadyCondition, true, holdfastv1.ConnectedReason, "cluster connected"),
		cond(holdfastv1.RenderedCondition, true, holdfastv1.RenderedReason, "rendered"),
		cond(holdfastv1.AppliedCondition, true, holdfastv1.AppliedReason, "every object applied"),
		cond(holdfastv1.HealthyCondition, true, holdfastv1.HealthyReason, "every object healthy"),
		drifted, contest,
		cond(holdfastv1.ReadyCondition, true, holdfastv1.ReadyReason, "applied and healthy"),
	}
}

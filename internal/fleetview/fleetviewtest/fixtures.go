// Package fleetviewtest holds the fixture fleet the tests of the fleet read model (package
// fleetview) and of the CLI verbs (cmd/holdfast) share: status objects as the controller would
// write them, with drift records, some corrected, and Secret values a buggy or older controller
// might have left unredacted.
package fleetviewtest

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Secret values the fixtures put into drift records unredacted, as a buggy or older controller
// might: no CLI output may contain them.
const (
	SecretOld   = "c2VjcmV0LW9sZA=="
	SecretNew   = "aHVudGVyMg=="
	SecretToken = "plain-token-value"
)

// WebRevision is the revision of the web service on both clusters of the fixtures.
const WebRevision = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// Now is the time the fixtures are made at: render them with it.
var Now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func micro(ago time.Duration) metav1.MicroTime { return metav1.NewMicroTime(Now.Add(-ago)) }

func timePtr(ago time.Duration) *metav1.Time {
	t := metav1.NewTime(Now.Add(-ago))
	return &t
}

func microPtr(ago time.Duration) *metav1.MicroTime {
	t := micro(ago)
	return &t
}

// cond is a condition as the API server accepts it.
func cond(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(Now.Add(-time.Hour))}
}

// Ref names an object of the fixtures.
func Ref(group, kind, ns, name string) holdfastv1.ResourceRef {
	return holdfastv1.ResourceRef{Group: group, Version: "v1", Kind: kind, Namespace: ns, Name: name}
}

// The objects of the fixtures: the web service's Deployment, ConfigMap and Secret, and the cache
// service's Service.
var (
	deployRef    = Ref("apps", "Deployment", "shop", "web")
	ConfigMapRef = Ref("", "ConfigMap", "shop", "web-settings")
	SecretRef    = Ref("", "Secret", "shop", "creds")
	svcRef       = Ref("", "Service", "shop", "cache")
)

// WebHealthMessage is why web on c2 is not healthy yet.
const WebHealthMessage = "apps/v1 Deployment shop/web: Available: 1/3"

// Statuses is a small fleet, deliberately out of order:
//   - fleet/c2 apps: web in sync but not healthy yet, service set paused;
//   - fleet/c1 apps: web with a scaled Deployment (Drifted) and a Contested Secret, cache with a
//     deleted Service (Missing), and drift records, some corrected;
//   - other/c1 infra: no services yet, its Cluster not ready.
func Statuses() []holdfastv1.ClusterServiceStatus {
	scale := holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Fields: []holdfastv1.FieldChange{{Path: ".spec.replicas", Old: "2", New: "5"}},
		Manager: "kubectl-scale", Operation: "Update", Subresource: "scale", DetectedTime: micro(3 * time.Minute)}
	secretEdit := holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Fields: []holdfastv1.FieldChange{
		{Path: ".data.password", Old: `"` + SecretOld + `"`, New: `"` + SecretNew + `"`},
		{Path: ".metadata.labels.tier", Old: `"gold"`, New: `"silver"`},
	}, Manager: "rotator", Operation: "Apply", DetectedTime: micro(time.Minute)}
	deleted := holdfastv1.DriftDetail{Type: holdfastv1.DriftDeleted, DetectedTime: micro(2 * time.Minute), Detection: holdfastv1.DriftDetectedByComparison}
	cmEdit := holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Fields: []holdfastv1.FieldChange{{Path: ".data.logLevel", Old: `"info"`, New: `"trace"`}},
		Manager: "kubectl-edit", Operation: "Update", DetectedTime: micro(10 * time.Minute)}
	tokenEdit := holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Fields: []holdfastv1.FieldChange{{Path: ".stringData.token", New: `"` + SecretToken + `"`}},
		Manager: "kubectl-edit", Operation: "Update", DetectedTime: micro(20 * time.Minute)}

	c1 := holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "apps.c1"},
		Spec:       holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "apps", Cluster: "c1"},
		Status: holdfastv1.ClusterServiceStatusStatus{
			SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
			Conditions: []metav1.Condition{
				cond(holdfastv1.ReadyCondition, metav1.ConditionFalse, holdfastv1.ApplyFailedReason, ""),
				cond(holdfastv1.PausedCondition, metav1.ConditionFalse, holdfastv1.NotPausedReason, ""),
			},
			Services: []holdfastv1.ServiceStatus{
				{Name: "web", Ready: metav1.ConditionTrue, Reason: "Ready", Objects: 3, Revision: WebRevision, LastAppliedTime: timePtr(30 * time.Minute),
					Health: holdfastv1.HealthCurrent},
				{Name: "cache", Ready: metav1.ConditionFalse, Reason: "Drifted", Message: "Service shop/cache was deleted", Objects: 1,
					Revision: "sha256:0c1d2e3f40516273", LastAppliedTime: timePtr(time.Hour)},
			},
			ObservedServiceSetGeneration: 3,
			LastFullReconcileTime:        timePtr(5 * time.Minute),
			Resources: []holdfastv1.ResourceStatus{
				{ResourceRef: SecretRef, Service: "web", State: holdfastv1.ResourceContested, Message: "rotator keeps reverting it", LastDrift: &secretEdit},
				{ResourceRef: deployRef, Service: "web", State: holdfastv1.ResourceDrifted, LastDrift: &scale},
				{ResourceRef: ConfigMapRef, Service: "web", State: holdfastv1.ResourceInSync},
				{ResourceRef: svcRef, Service: "cache", State: holdfastv1.ResourceMissing, LastDrift: &deleted},
			},
			Drifts: []holdfastv1.DriftRecord{
				{ResourceRef: SecretRef, Service: "web", DriftDetail: secretEdit},
				{ResourceRef: svcRef, Service: "cache", DriftDetail: deleted},
				{ResourceRef: deployRef, Service: "web", DriftDetail: scale},
				{ResourceRef: ConfigMapRef, Service: "web", DriftDetail: cmEdit, CorrectedTime: microPtr(10*time.Minute - 350*time.Millisecond)},
				{ResourceRef: SecretRef, Service: "web", DriftDetail: tokenEdit, CorrectedTime: microPtr(20*time.Minute - 2*time.Second)},
			},
			DriftCount:   5,
			DriftedCount: 3,
		},
	}
	c2 := holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "apps.c2"},
		Spec:       holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "apps", Cluster: "c2"},
		Status: holdfastv1.ClusterServiceStatusStatus{
			SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
			Conditions: []metav1.Condition{
				cond(holdfastv1.ReadyCondition, metav1.ConditionFalse, holdfastv1.PausedReason, ""),
				cond(holdfastv1.PausedCondition, metav1.ConditionTrue, holdfastv1.PausedReason, ""),
			},
			Services: []holdfastv1.ServiceStatus{{Name: "web", Ready: metav1.ConditionTrue, Reason: "Ready", Objects: 3,
				Revision: WebRevision, LastAppliedTime: timePtr(2 * time.Hour),
				Health: holdfastv1.HealthInProgress, HealthMessage: WebHealthMessage}},
			ObservedServiceSetGeneration: 2,
			Resources:                    []holdfastv1.ResourceStatus{{ResourceRef: deployRef, Service: "web", State: holdfastv1.ResourceInSync}},
		},
	}
	infra := holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "infra.c1"},
		Spec:       holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "infra", Cluster: "c1"},
		Status: holdfastv1.ClusterServiceStatusStatus{Conditions: []metav1.Condition{
			cond(holdfastv1.ReadyCondition, metav1.ConditionFalse, holdfastv1.ClusterNotReadyReason, "Cluster other/c1 is not Connected"),
		}},
	}
	return []holdfastv1.ClusterServiceStatus{infra, c2, c1}
}

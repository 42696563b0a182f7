package conditions

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestSetReady(t *testing.T) {
	summary := Summary{Negative: []string{holdfastv1.PausedCondition}, Positive: []string{holdfastv1.ClusterConnectedCondition}}
	cond := func(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
	}
	tests := []struct {
		name       string
		conds      []metav1.Condition
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{
			name:       "nothing known yet is Unknown",
			wantStatus: metav1.ConditionUnknown, wantReason: holdfastv1.ProbingReason, wantMsg: "Paused is not known yet",
		},
		{
			name: "all fine is True",
			conds: []metav1.Condition{
				cond(holdfastv1.PausedCondition, metav1.ConditionFalse, holdfastv1.NotPausedReason, ""),
				cond(holdfastv1.ClusterConnectedCondition, metav1.ConditionTrue, holdfastv1.ConnectedReason, ""),
			},
			wantStatus: metav1.ConditionTrue, wantReason: holdfastv1.ReadyReason,
		},
		{
			name: "paused wins over a connection failure",
			conds: []metav1.Condition{
				cond(holdfastv1.PausedCondition, metav1.ConditionTrue, holdfastv1.PausedReason, "paused by spec.paused"),
				cond(holdfastv1.ClusterConnectedCondition, metav1.ConditionFalse, holdfastv1.UnreachableReason, "refused"),
			},
			wantStatus: metav1.ConditionFalse, wantReason: holdfastv1.PausedReason, wantMsg: "paused by spec.paused",
		},
		{
			name: "a failing positive condition gives its reason and message",
			conds: []metav1.Condition{
				cond(holdfastv1.PausedCondition, metav1.ConditionFalse, holdfastv1.NotPausedReason, ""),
				cond(holdfastv1.ClusterConnectedCondition, metav1.ConditionFalse, holdfastv1.SecretNotFoundReason, "Secret x not found"),
			},
			wantStatus: metav1.ConditionFalse, wantReason: holdfastv1.SecretNotFoundReason, wantMsg: "Secret x not found",
		},
		{
			name: "an unknown positive condition makes Ready Unknown",
			conds: []metav1.Condition{
				cond(holdfastv1.PausedCondition, metav1.ConditionFalse, holdfastv1.NotPausedReason, ""),
				cond(holdfastv1.ClusterConnectedCondition, metav1.ConditionUnknown, holdfastv1.ProbingReason, ""),
			},
			wantStatus: metav1.ConditionUnknown, wantReason: holdfastv1.ProbingReason, wantMsg: "Connected is Unknown",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Generation: 7}}
			obj.Status.Conditions = tt.conds
			SetReady(obj, summary)
			got := Get(obj, holdfastv1.ReadyCondition)
			if got == nil {
				t.Fatal("Ready was not set")
			}
			if got.Status != tt.wantStatus || got.Reason != tt.wantReason || got.Message != tt.wantMsg {
				t.Errorf("Ready = %s/%s/%q, want %s/%s/%q", got.Status, got.Reason, got.Message, tt.wantStatus, tt.wantReason, tt.wantMsg)
			}
			if got.ObservedGeneration != 7 {
				t.Errorf("ObservedGeneration = %d, want 7", got.ObservedGeneration)
			}
			if got.LastTransitionTime.IsZero() {
				t.Error("LastTransitionTime not set")
			}
		})
	}
}

func TestSetProgress(t *testing.T) {
	for _, tt := range []struct {
		status                  metav1.ConditionStatus
		reason                  string
		wantStalled, wantReconc metav1.ConditionStatus
	}{
		{metav1.ConditionTrue, holdfastv1.ReadyReason, metav1.ConditionFalse, metav1.ConditionFalse},
		{metav1.ConditionFalse, holdfastv1.TemplateNotFoundReason, metav1.ConditionTrue, metav1.ConditionFalse},
		{metav1.ConditionFalse, holdfastv1.InvalidKubeconfigReason, metav1.ConditionTrue, metav1.ConditionFalse},
		{metav1.ConditionFalse, holdfastv1.UnreachableReason, metav1.ConditionFalse, metav1.ConditionTrue},
		{metav1.ConditionUnknown, holdfastv1.ProgressingReason, metav1.ConditionFalse, metav1.ConditionTrue},
		{metav1.ConditionFalse, holdfastv1.DeletingReason, metav1.ConditionFalse, metav1.ConditionTrue},
		{metav1.ConditionFalse, holdfastv1.PausedReason, metav1.ConditionFalse, metav1.ConditionFalse},
	} {
		c := &holdfastv1.Cluster{}
		c.Generation = 3
		SetProgress(c, metav1.Condition{Type: holdfastv1.ReadyCondition, Status: tt.status, Reason: tt.reason, Message: "why"})
		stalled, reconciling := Get(c, holdfastv1.StalledCondition), Get(c, holdfastv1.ReconcilingCondition)
		if stalled == nil || reconciling == nil || stalled.Status != tt.wantStalled || reconciling.Status != tt.wantReconc {
			t.Errorf("Ready %s/%s: Stalled %v, Reconciling %v; want %s, %s", tt.status, tt.reason, stalled, reconciling, tt.wantStalled, tt.wantReconc)
			continue
		}
		if stalled.ObservedGeneration != 3 || stalled.Reason != tt.reason {
			t.Errorf("Ready %s/%s: Stalled %+v, want observed generation 3 and Ready's reason", tt.status, tt.reason, stalled)
		}
	}
}

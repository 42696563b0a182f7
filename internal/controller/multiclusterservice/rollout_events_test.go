package multiclusterservice

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/notify"
)

func TestRolloutEventIsOfThePhaseEnteredNow(t *testing.T) {
	withRollout := func(phase holdfastv1.RolloutPhase, revision string) *holdfastv1.MultiClusterService {
		m := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
		if phase != "" {
			m.Status.Rollout = &holdfastv1.RolloutStatus{Phase: phase, Revision: revision}
		}
		return m
	}
	cases := []struct {
		name          string
		before, after *holdfastv1.MultiClusterService
		want          notify.EventType
	}{
		{"no rollout", withRollout("", ""), withRollout("", ""), ""},
		{"halted now", withRollout(holdfastv1.RolloutProgressing, "r2"), withRollout(holdfastv1.RolloutHalted, "r2"), notify.RolloutHalted},
		{"still halted", withRollout(holdfastv1.RolloutHalted, "r2"), withRollout(holdfastv1.RolloutHalted, "r2"), ""},
		{"complete now", withRollout(holdfastv1.RolloutProgressing, "r2"), withRollout(holdfastv1.RolloutComplete, "r2"), notify.RolloutComplete},
		{"still complete", withRollout(holdfastv1.RolloutComplete, "r2"), withRollout(holdfastv1.RolloutComplete, "r2"), ""},
		{"the next revision complete at once", withRollout(holdfastv1.RolloutComplete, "r2"), withRollout(holdfastv1.RolloutComplete, "r3"), notify.RolloutComplete},
		{"the first rollout complete", withRollout("", ""), withRollout(holdfastv1.RolloutComplete, "r1"), notify.RolloutComplete},
		{"progressing", withRollout(holdfastv1.RolloutComplete, "r2"), withRollout(holdfastv1.RolloutProgressing, "r3"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := (&Reconciler{}).rolloutEvent(&scope{mcs: tc.after, before: tc.before})
			if ok != (tc.want != "") || e.Type != tc.want {
				t.Fatalf("event %q (%v), want %q", e.Type, ok, tc.want)
			}
			if ok && (e.MultiClusterService != "web" || e.Rollout == nil || e.Rollout.Revision != tc.after.Status.Rollout.Revision) {
				t.Errorf("event %+v, want one of service set web, revision %s", e, tc.after.Status.Rollout.Revision)
			}
		})
	}
}

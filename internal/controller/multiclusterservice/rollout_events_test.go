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
		{"a new revision progressing", withRollout(holdfastv1.RolloutComplete, "r2"), withRollout(holdfastv1.RolloutProgressing, "r3"), notify.RolloutProgressing},
		{"the first rollout progressing", withRollout("", ""), withRollout(holdfastv1.RolloutProgressing, "r1"), notify.RolloutProgressing},
		{"replaced while progressing", withRollout(holdfastv1.RolloutProgressing, "r2"), withRollout(holdfastv1.RolloutProgressing, "r3"), notify.RolloutProgressing},
		{"resumed", withRollout(holdfastv1.RolloutHalted, "r2"), withRollout(holdfastv1.RolloutProgressing, "r2"), notify.RolloutProgressing},
		{"still progressing", withRollout(holdfastv1.RolloutProgressing, "r2"), withRollout(holdfastv1.RolloutProgressing, "r2"), ""},
		{"the next wave after a pause", withRollout(holdfastv1.RolloutPausing, "r2"), withRollout(holdfastv1.RolloutProgressing, "r2"), ""},
		{"previewing", withRollout(holdfastv1.RolloutComplete, "r2"), withRollout(holdfastv1.RolloutPreviewing, "r3"), ""},
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

// TestRolloutEventCommit: a rollout event carries the commit of its revision's Git-sourced
// templates, and none for another revision.
func TestRolloutEventCommit(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	mcs.Spec.Services = []holdfastv1.Service{
		{Name: "config", Template: holdfastv1.TemplateReference{Namespace: "t", Name: "inline"}},
		{Name: "app", Template: holdfastv1.TemplateReference{Namespace: "t", Name: "oci"}},
		{Name: "web", Template: holdfastv1.TemplateReference{Namespace: "t", Name: "git"}},
	}
	artifact := func(kind, revision string) *holdfastv1.ServiceTemplate {
		tpl := &holdfastv1.ServiceTemplate{}
		tpl.Spec.Artifact = &holdfastv1.ArtifactSource{SourceRef: &holdfastv1.FluxSourceReference{Kind: holdfastv1.FluxSourceKind(kind), Name: "src"}}
		tpl.Status.Artifact = &holdfastv1.ArtifactStatus{Revision: revision}
		return tpl
	}
	templates := map[string]*holdfastv1.ServiceTemplate{
		"t/inline": {Spec: holdfastv1.ServiceTemplateSpec{Inline: "{}"}},
		"t/oci":    artifact("OCIRepository", "latest@sha256:"+sha+sha[:24]),
		"t/git":    artifact("GitRepository", "main@sha1:"+sha),
	}
	commit := sourceCommit(mcs, templates)
	if commit != sha {
		t.Fatalf("sourceCommit = %q, want the GitRepository's %s", commit, sha)
	}
	before := mcs.DeepCopy()
	mcs.Status.Rollout = &holdfastv1.RolloutStatus{Phase: holdfastv1.RolloutProgressing, Revision: "r2"}
	for revision, want := range map[string]string{"r2": sha, "r1": ""} {
		e, ok := (&Reconciler{}).rolloutEvent(&scope{mcs: mcs, before: before, commit: commit, commitRevision: revision})
		if !ok || e.Commit != want {
			t.Errorf("commit of revision %s: event %+v (%v), want commit %q", revision, e, ok, want)
		}
	}
}

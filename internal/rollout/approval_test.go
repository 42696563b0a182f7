package rollout

import (
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// planApproving is plan with an approval carried by the service set.
func (f *fleet) planApproving(revision string, a *Approval) Plan {
	f.t.Helper()
	p, err := Make(Input{Strategy: f.strategy, Previous: f.status, Revision: revision, Clusters: f.clusters, Approval: a, Now: f.now})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, c := range f.clusters {
		if c.Status.Spec.Revision != p.Assign[c.Key] {
			c.Status.Spec.Revision = p.Assign[c.Key]
			c.Status.Generation++
		}
	}
	st := p.Status
	f.status = &st
	return p
}

// previewed has cluster i record its preview of what the rollout asks to preview.
func (f *fleet) previewed(i int) {
	request := holdfastv1.PreviewRequest(f.status)
	f.clusters[i].Status.Status.Preview = &holdfastv1.ClusterPreview{Revision: holdfastv1.RevisionOf(request), Request: request, Outcome: holdfastv1.PreviewChanges}
}

// TestManualApprovalHoldsTheRevision: with approval Manual the first revision goes out at once;
// a new one is held (every cluster keeps r1 and previews r2) in Previewing until every cluster
// previewed it, then Previewed; an approval of another revision, or one handled before,
// approves nothing; an approval of r2 records who and the preview, and the rollout starts at
// the first wave. A revision that changes after its approval is held again.
func TestManualApprovalHoldsTheRevision(t *testing.T) {
	f := newFleet(t, holdfastv1.RolloutStrategy{WaveLabel: "wave", Approval: holdfastv1.ApprovalManual})
	f.plan("r1", "", "")
	for i := range f.clusters {
		f.reconcile(i, true)
	}
	if p := f.planApproving("r1", nil); p.Status.Phase != holdfastv1.RolloutComplete {
		t.Fatalf("first revision: phase %s, want Complete", p.Status.Phase)
	}

	p := f.planApproving("r2", nil)
	if p.Status.Phase != holdfastv1.RolloutPreviewing {
		t.Fatalf("new revision: phase %s, want Previewing", p.Status.Phase)
	}
	if got := holdfastv1.PreviewRequest(&p.Status); holdfastv1.RevisionOf(got) != "r2" {
		t.Fatalf("preview request %q, want one of r2", got)
	}
	for _, c := range f.clusters {
		if p.Assign[c.Key] != "r1" {
			t.Fatalf("%s: assigned %q, want r1 kept", c.Key, p.Assign[c.Key])
		}
	}
	for i := range 5 {
		f.previewed(i)
	}
	if p := f.planApproving("r2", nil); p.Status.Phase != holdfastv1.RolloutPreviewing {
		t.Fatalf("five of six previewed: phase %s, want Previewing", p.Status.Phase)
	}
	f.previewed(5)
	p = f.planApproving("r2", nil)
	if p.Status.Phase != holdfastv1.RolloutPreviewed || p.Status.Preview == nil || p.Status.Preview.Previewed != 6 || p.Status.Preview.Changed != 6 {
		t.Fatalf("all previewed: phase %s, preview %+v; want Previewed, 6 of 6 changed", p.Status.Phase, p.Status.Preview)
	}
	seen := p.Status.Preview.Digest

	if p := f.planApproving("r2", &Approval{Value: "r1 t1", By: "alice", Verified: true}); p.Status.Phase != holdfastv1.RolloutPreviewed || p.Status.Approval != nil {
		t.Fatalf("approval of r1: phase %s, approval %+v; want still Previewed, none", p.Status.Phase, p.Status.Approval)
	}
	p = f.planApproving("r2", &Approval{Value: "r2 t2", By: "alice", Verified: true})
	if p.Status.Phase != holdfastv1.RolloutProgressing || p.Status.Approval == nil {
		t.Fatalf("approval of r2: phase %s, approval %+v; want Progressing, recorded", p.Status.Phase, p.Status.Approval)
	}
	if a := p.Status.Approval; a.By != "alice" || !a.Verified || a.Revision != "r2" || a.PreviewDigest != seen || seen == "" || !a.PreviewComplete {
		t.Fatalf("approval recorded as %+v", a)
	}
	if got := f.revisions(); got != "r2 r2 r1 r1 r1 r1 " {
		t.Fatalf("after approval: %s, want the first wave on r2", got)
	}
	if got := holdfastv1.PreviewRequest(&p.Status); got != "" {
		t.Fatalf("still asking for a preview (%q) after the approval", got)
	}

	// r3 comes; the approval of r2, still on the service set, approves nothing.
	f.now = f.now.Add(time.Minute)
	if p := f.planApproving("r3", &Approval{Value: "r2 t2", By: "alice", Verified: true}); p.Status.Phase != holdfastv1.RolloutPreviewing || p.Status.Approval != nil {
		t.Fatalf("r3 with r2's approval: phase %s, approval %+v; want Previewing, none", p.Status.Phase, p.Status.Approval)
	}
	if got := f.revisions(); got != "r2 r2 r1 r1 r1 r1 " {
		t.Fatalf("r3 held: %s, want every cluster kept where it was", got)
	}
	// Back to r2's declaration: the old approval is handled, and does not come back; the
	// previews made for r2's first hold do not count for this one.
	f.now = f.now.Add(time.Minute)
	if p := f.planApproving("r2", &Approval{Value: "r2 t2", By: "alice", Verified: true}); p.Status.Phase != holdfastv1.RolloutPreviewing {
		t.Fatalf("r2 again with its old approval: phase %s, want Previewing", p.Status.Phase)
	}
}

// TestApprovalSwitchedOffReleasesTheRevision: a held revision rolls out once approval is
// Automatic again.
func TestApprovalSwitchedOffReleasesTheRevision(t *testing.T) {
	f := newFleet(t, holdfastv1.RolloutStrategy{Approval: holdfastv1.ApprovalManual})
	f.plan("r1", "", "")
	for i := range f.clusters {
		f.reconcile(i, true)
	}
	if p := f.planApproving("r2", nil); p.Status.Phase != holdfastv1.RolloutPreviewing {
		t.Fatalf("phase %s, want Previewing", p.Status.Phase)
	}
	f.strategy.Approval = holdfastv1.ApprovalAutomatic
	if p := f.planApproving("r2", nil); p.Status.Phase != holdfastv1.RolloutProgressing {
		t.Fatalf("approval off: phase %s, want Progressing", p.Status.Phase)
	}
	if got := f.revisions(); got != "r2 r2 r2 r2 r2 r2 " {
		t.Fatalf("approval off: %s, want r2 everywhere (one wave)", got)
	}
}

// TestSelectorChangeHeldForApproval: with approval Manual a revision that changes which clusters
// are selected holds them too: a cluster only it selects is held (no revision, nothing deployed),
// one it no longer selects keeps its revision, and the selector in force stays the old one (an
// abort keeps it so); once approved, the leaving cluster is dropped, the joining one is given the
// revision, and the new selector is in force.
func TestSelectorChangeHeldForApproval(t *testing.T) {
	old := holdfastv1.ClusterSelector{}
	old.MatchLabels = map[string]string{"env": "prod"}
	declared := holdfastv1.ClusterSelector{}
	declared.MatchLabels = map[string]string{"team": "a"}
	strategy := holdfastv1.RolloutStrategy{Approval: holdfastv1.ApprovalManual}
	staying := Cluster{Key: "ns/staying", Status: &holdfastv1.ClusterServiceStatus{}}
	leaving := Cluster{Key: "ns/leaving", Status: &holdfastv1.ClusterServiceStatus{}}
	staying.Status.Spec.Revision, leaving.Status.Spec.Revision = "r1", "r1"
	first, err := Make(Input{Strategy: strategy, Revision: "r1", Selector: old, Clusters: []Cluster{staying, leaving}, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if sel := first.Status.ClusterSelector; sel == nil || sel.MatchLabels["env"] != "prod" {
		t.Fatalf("first revision: selector in force %+v, want env=prod", sel)
	}

	leaving.Membership = Leaving
	joining := Cluster{Key: "ns/joining", Membership: Joining}
	clusters := []Cluster{staying, leaving, joining}
	held, err := Make(Input{Strategy: strategy, Previous: &first.Status, Revision: "r2", Selector: declared, Clusters: clusters, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if held.Status.Phase != holdfastv1.RolloutPreviewing || held.Status.ClusterSelector.MatchLabels["env"] != "prod" {
		t.Fatalf("held: phase %s, selector in force %+v; want Previewing, env=prod", held.Status.Phase, held.Status.ClusterSelector)
	}
	if rev, ok := held.Assign["ns/joining"]; !ok || rev != "" {
		t.Fatalf("held: joining cluster assigned %q (kept %v), want held (\"\")", rev, ok)
	}
	if held.Assign["ns/leaving"] != "r1" || held.Assign["ns/staying"] != "r1" {
		t.Fatalf("held: %v, want the leaving and staying clusters kept on r1", held.Assign)
	}
	if held.Status.Preview == nil || held.Status.Preview.Clusters != 3 {
		t.Fatalf("held: preview %+v, want all three clusters asked", held.Status.Preview)
	}

	joining.Status = &holdfastv1.ClusterServiceStatus{}
	joining.Status.Spec.Held = true
	clusters[2] = joining
	aborted, err := Make(Input{Strategy: strategy, Previous: &held.Status, Revision: "r2", Selector: declared, Clusters: clusters,
		Abort: "now", Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if aborted.Status.Phase != holdfastv1.RolloutAborted || aborted.Status.ClusterSelector.MatchLabels["env"] != "prod" ||
		aborted.Assign["ns/joining"] != "" || aborted.Assign["ns/leaving"] != "r1" {
		t.Fatalf("aborted: phase %s, selector in force %+v, %v; want Aborted, env=prod kept, joining held, leaving on r1",
			aborted.Status.Phase, aborted.Status.ClusterSelector, aborted.Assign)
	}
	approved, err := Make(Input{Strategy: strategy, Previous: &held.Status, Revision: "r2", Selector: declared, Clusters: clusters,
		Approval: &Approval{Value: holdfastv1.ApproveValue("r2", time.Now()), By: "alice"}, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := approved.Assign["ns/leaving"]; ok {
		t.Fatalf("approved: leaving cluster still assigned %v", approved.Assign)
	}
	if approved.Assign["ns/joining"] != "r2" || approved.Status.ClusterSelector.MatchLabels["team"] != "a" {
		t.Fatalf("approved: %v, selector in force %+v; want the joining cluster on r2, team=a in force", approved.Assign, approved.Status.ClusterSelector)
	}
}

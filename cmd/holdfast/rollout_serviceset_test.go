package main

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestRolloutVerbsOnATenantsServiceSet: `holdfast diff` and `holdfast rollout` name a tenant's
// ServiceSet as NAMESPACE/NAME: diff prints its preview from the ServiceSet's status, approve
// writes the approval on the ServiceSet (which Holdfast carries to the MultiClusterService it
// runs as) and refuses another revision, and nothing is written on any MultiClusterService.
func TestRolloutVerbsOnATenantsServiceSet(t *testing.T) {
	ctx := t.Context()
	hub, c := startHub(t)
	cli := &cliRunner{kubeconfig: hub.KubeconfigPath()}
	mustCreate(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	ss := &holdfastv1.ServiceSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "apps"},
		Spec: holdfastv1.MultiClusterServiceSpec{Rollout: &holdfastv1.RolloutStrategy{Approval: holdfastv1.ApprovalManual},
			Services: []holdfastv1.Service{{Name: "web", Template: holdfastv1.TemplateReference{Namespace: "team-a", Name: "web"}}}}}
	mustCreate(t, c, ss)
	ss.Status.MultiClusterService = "team-a.apps"
	ss.Status.Rollout = &holdfastv1.RolloutStatus{Revision: "team-a.apps-r2", StableRevision: "team-a.apps-r1", Phase: holdfastv1.RolloutPreviewed,
		StartTime: &metav1.Time{Time: metav1.Now().Rfc3339Copy().Time},
		Preview: &holdfastv1.RolloutPreview{Revision: "team-a.apps-r2", Clusters: 1, Previewed: 1, Changed: 1, Groups: []holdfastv1.PreviewGroup{{
			Digest: "d1", Outcome: holdfastv1.PreviewChanges, Clusters: 1, Examples: []string{"team-a/edge"},
			Changes: []holdfastv1.PreviewChange{{Service: "web", Object: "v1 ConfigMap web/settings", Action: holdfastv1.PreviewUpdate,
				Diff: []string{`/data/mode: "a" -> "b"`}}}}}}}
	if err := c.Status().Update(ctx, ss); err != nil {
		t.Fatal(err)
	}

	out := cli.run(t, "diff", "team-a/apps")
	for _, want := range []string{"team-a.apps-r2", "1 cluster (team-a/edge)", `/data/mode: "a" -> "b"`} {
		if !strings.Contains(out, want) {
			t.Errorf("diff team-a/apps lacks %q:\n%s", want, out)
		}
	}
	if out, err := cli.exec("rollout", "approve", "team-a/apps", "--revision", "team-a.apps-r1"); err == nil {
		t.Errorf("approving another revision than the held one succeeded:\n%s", out)
	}
	cli.run(t, "rollout", "approve", "team-a/apps", "--revision", "team-a.apps-r2")
	got := &holdfastv1.ServiceSet{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(ss), got); err != nil {
		t.Fatal(err)
	}
	if v := got.Annotations[holdfastv1.RolloutApproveAnnotation]; holdfastv1.RevisionOf(v) != "team-a.apps-r2" {
		t.Errorf("the ServiceSet's approval is %q, want one of team-a.apps-r2", v)
	}
	list := &holdfastv1.MultiClusterServiceList{}
	if err := c.List(ctx, list); err != nil || len(list.Items) != 0 {
		t.Errorf("MultiClusterServices on the hub: %d (%v), want none written", len(list.Items), err)
	}
	if out := cli.run(t, "rollout", "status", "team-a/apps"); !strings.Contains(out, "Previewed") {
		t.Errorf("rollout status team-a/apps:\n%s", out)
	}

	t.Log("diff --wait: waits for the preview to be complete; gives up with exit 2 when it is not")
	ss = got
	ss.Status.Rollout.Phase, ss.Status.Rollout.Preview.Previewed = holdfastv1.RolloutPreviewing, 0
	if err := c.Status().Update(ctx, ss); err != nil {
		t.Fatal(err)
	}
	if out, err := cli.exec("diff", "team-a/apps", "--wait", "1500ms", "--exit-code"); exitCodeOf(err) != 2 || !strings.Contains(out, "not every cluster has previewed") {
		t.Errorf("diff --wait while Previewing: exit %d (%v), want 2:\n%s", exitCodeOf(err), err, out)
	}
	waiting := cli.start("diff", "team-a/apps", "--wait", "30s", "--exit-code")
	time.Sleep(1500 * time.Millisecond)
	ss.Status.Rollout.Phase, ss.Status.Rollout.Preview.Previewed = holdfastv1.RolloutPreviewed, 1
	if err := c.Status().Update(ctx, ss); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-waiting:
		if exitCodeOf(res.err) != 1 || !strings.Contains(res.out, "previewed on 1 of 1") {
			t.Errorf("diff --wait once Previewed: exit %d (%v), want 1 (changes):\n%s", exitCodeOf(res.err), res.err, res.out)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("diff --wait did not end once the preview was complete")
	}
}

// exitCodeOf is the process's exit code for err, 0 for nil (exitCode).
func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	code, _ := exitCode(err)
	return code
}

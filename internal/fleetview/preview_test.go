package fleetview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsyaml "sigs.k8s.io/yaml"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview/fleetviewtest"
)

const previewRevision = "platform-6f1c9a2b7d"

// previewServiceSet is a service set holding previewRevision for approval, previewed on its 16
// clusters: 12 would change (in 4 groups, 2 of them left out of the summary), 1 unchanged, 1
// refused, 1 failed, 1 cannot be previewed. A group's Secret change carries values a buggy
// controller left unmasked.
func previewServiceSet() *holdfastv1.MultiClusterService {
	return &holdfastv1.MultiClusterService{
		ObjectMeta: metav1.ObjectMeta{Name: "platform"},
		Spec:       holdfastv1.MultiClusterServiceSpec{Rollout: &holdfastv1.RolloutStrategy{Approval: holdfastv1.ApprovalManual}},
		Status: holdfastv1.MultiClusterServiceStatus{Rollout: &holdfastv1.RolloutStatus{
			Revision: previewRevision, StableRevision: "platform-0a1b2c3d4e", Phase: holdfastv1.RolloutPreviewed,
			Preview: &holdfastv1.RolloutPreview{Revision: previewRevision, Clusters: 16, Previewed: 16, NoChange: 1, Changed: 12, Refused: 1,
				Failed: 1, Unsupported: 1, Joining: 2, OmittedGroups: 2, Digest: "0f0f",
				Groups: []holdfastv1.PreviewGroup{
					{Digest: "d1", Outcome: holdfastv1.PreviewChanges, Clusters: 8,
						Examples: []string{"fleet/a", "fleet/b", "fleet/c", "fleet/d", "fleet/e"},
						Changes: []holdfastv1.PreviewChange{
							{Service: "web", Object: "apps/v1 Deployment demo/web", Action: holdfastv1.PreviewUpdate,
								Diff: []string{`/spec/template/spec/containers/0/image: "web:1.2" -> "web:1.3"`, `/spec/replicas: 2 -> 3`}},
							{Service: "web", Object: "v1 Secret demo/creds", Action: holdfastv1.PreviewUpdate,
								Diff: []string{`/data/password: "` + fleetviewtest.SecretOld + `" -> "` + fleetviewtest.SecretNew + `"`, `/metadata/labels/tier: <none> -> "web"`}},
						}, OmittedChanges: 4},
					{Digest: "d2", Outcome: holdfastv1.PreviewChanges, Selection: holdfastv1.PreviewJoining, Clusters: 2, Examples: []string{"fleet/f", "fleet/g"},
						Changes: []holdfastv1.PreviewChange{{Service: "flags", Object: "v1 ConfigMap demo/flags", Action: holdfastv1.PreviewCreate,
							Diff: []string{"+ apiVersion: v1", "+ data:", "+   beta: \"on\"", "+ kind: ConfigMap"}}}},
					{Digest: "d3", Outcome: holdfastv1.PreviewRefused, Clusters: 1, Examples: []string{"fleet/h"},
						Message: "v1 ConfigMap demo/big: exceeded quota: configmaps=10",
						Changes: []holdfastv1.PreviewChange{{Service: "web", Object: "v1 ConfigMap demo/big", Action: holdfastv1.PreviewRefuse,
							Diff: []string{"exceeded quota: configmaps=10"}}}},
					{Digest: "d4", Outcome: holdfastv1.PreviewFailed, Clusters: 1, Examples: []string{"fleet/i"},
						Message: "the cluster cannot be reached: i/o timeout"},
				}},
		}},
	}
}

func printPreview(t *testing.T, v PreviewView) string {
	t.Helper()
	var buf bytes.Buffer
	if err := PrintPreview(&buf, v); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestPrintPreviewSummary(t *testing.T) {
	doc, err := NewPreviewList(previewServiceSet())
	if err != nil {
		t.Fatal(err)
	}
	out := printPreview(t, doc.Items[0])
	lines := strings.Split(out, "\n")
	if want := "Revision platform-6f1c9a2b7d of service set platform previewed on 16 of 16 clusters: " +
		"12 would change, 1 unchanged, 1 refused, 1 failed, 1 cannot be previewed, 2 newly selected."; lines[0] != want {
		t.Errorf("first line = %q, want %q", lines[0], want)
	}
	for _, want := range []string{
		// Every group, its examples (and how many more clusters it has), its changes whole as
		// the summary keeps them, and the objects it left out.
		"8 clusters (fleet/a, fleet/b, fleet/c, fleet/d, fleet/e and 3 more): 6 objects would change\n" +
			"  Update apps/v1 Deployment demo/web [service web]\n" +
			"    /spec/template/spec/containers/0/image: \"web:1.2\" -> \"web:1.3\"\n" +
			"    /spec/replicas: 2 -> 3\n",
		"  ... and 4 more objects\n",
		"2 clusters newly selected (fleet/f, fleet/g): 1 object would change\n  Create v1 ConfigMap demo/flags [service flags]\n    + apiVersion: v1\n    + data:\n    +   beta: \"on\"\n",
		"1 cluster (fleet/h): refused — v1 ConfigMap demo/big: exceeded quota: configmaps=10\n",
		"1 cluster (fleet/i): preview failed (it is tried again) — the cluster cannot be reached: i/o timeout\n",
		"2 more groups not shown: holdfast diff platform --cluster NAMESPACE/NAME shows one cluster's whole preview\n",
		"Waiting for approval: holdfast rollout approve platform --revision platform-6f1c9a2b7d\n",
		// A Secret's values are redacted, whatever the controller recorded; other lines kept.
		"    /data/password: (redacted) -> (redacted)\n    /metadata/labels/tier: <none> -> \"web\"\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("preview lacks %q:\n%s", want, out)
		}
	}
	for _, secret := range []string{fleetviewtest.SecretOld, fleetviewtest.SecretNew} {
		if strings.Contains(out, secret) {
			t.Errorf("preview shows the Secret value %q:\n%s", secret, out)
		}
	}
}

func TestPrintPreviewIncompleteAndApproved(t *testing.T) {
	mcs := previewServiceSet()
	ro := mcs.Status.Rollout
	ro.Phase, ro.Preview.Previewed, ro.Preview.Changed, ro.Preview.Failed, ro.Preview.Unsupported = holdfastv1.RolloutPreviewing, 10, 7, 0, 0
	doc, err := NewPreviewList(mcs)
	if err != nil {
		t.Fatal(err)
	}
	out := printPreview(t, doc.Items[0])
	for _, want := range []string{
		"previewed on 10 of 16 clusters (6 not yet): 7 would change, 1 unchanged, 1 refused, 2 newly selected.\n",
		"Waiting for approval while the clusters preview it: holdfast rollout approve platform --revision platform-6f1c9a2b7d\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("preview in progress lacks %q:\n%s", want, out)
		}
	}

	// Approved, by a user the hub's admission policy did not stamp, before every cluster had
	// previewed it: the preview stays, with who approved it and when.
	approved := metav1.NewTime(fleetviewtest.Now)
	ro.Phase = holdfastv1.RolloutProgressing
	ro.Approval = &holdfastv1.RolloutApproval{Revision: previewRevision, By: "alice@example.com", Time: approved, PreviewDigest: "0f0f"}
	doc, err = NewPreviewList(mcs)
	if err != nil {
		t.Fatal(err)
	}
	out = printPreview(t, doc.Items[0])
	want := "Approved by alice@example.com at 2026-07-01T12:00:00Z (not verified: the hub's admission policy holdfast-rollout-approvals " +
		"did not stamp the approver), before every cluster had previewed it; the rollout is Progressing.\n"
	if !strings.HasSuffix(out, want) || strings.Contains(out, "Waiting for approval") {
		t.Errorf("approved preview does not end with %q:\n%s", want, out)
	}
	ro.Approval.Verified, ro.Approval.PreviewComplete = true, true
	doc, _ = NewPreviewList(mcs)
	out = printPreview(t, doc.Items[0])
	if want := "Approved by alice@example.com at 2026-07-01T12:00:00Z; the rollout is Progressing.\n"; !strings.HasSuffix(out, want) {
		t.Errorf("verified approval does not end with %q:\n%s", want, out)
	}
}

// Why there is no preview, saying what to set or wait for.
func TestNewPreviewListWithoutPreview(t *testing.T) {
	cases := []struct {
		name   string
		change func(*holdfastv1.MultiClusterService)
		want   []string
	}{
		{"no rollout", func(m *holdfastv1.MultiClusterService) { m.Spec.Rollout = nil },
			[]string{"has no rollout (spec.rollout)", "set spec.rollout.approval: Manual"}},
		{"approval automatic", func(m *holdfastv1.MultiClusterService) {
			m.Spec.Rollout.Approval, m.Status.Rollout.Phase, m.Status.Rollout.Preview = "", holdfastv1.RolloutComplete, nil
		}, []string{"its rollout approval is Automatic", "set spec.rollout.approval: Manual"}},
		{"no rollout status", func(m *holdfastv1.MultiClusterService) { m.Status.Rollout = nil }, []string{"no rollout status yet"}},
		{"being previewed", func(m *holdfastv1.MultiClusterService) {
			m.Status.Rollout.Phase, m.Status.Rollout.Preview = holdfastv1.RolloutPreviewing, nil
		}, []string{"revision platform-6f1c9a2b7d is being previewed", "try again shortly"}},
		{"first revision, not previewed", func(m *holdfastv1.MultiClusterService) {
			m.Status.Rollout.Phase, m.Status.Rollout.Preview = holdfastv1.RolloutComplete, nil
		}, []string{"revision platform-6f1c9a2b7d was not previewed", "Complete"}},
		{"summary of another revision", func(m *holdfastv1.MultiClusterService) { m.Status.Rollout.Revision = "platform-77aa" },
			[]string{"preview is of revision platform-6f1c9a2b7d, not of the rollout's revision platform-77aa"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mcs := previewServiceSet()
			c.change(mcs)
			_, err := NewPreviewList(mcs)
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error = %v, want one with %q", err, w)
				}
			}
		})
	}
}

// clusterStatus is the status object of platform on fleet/a, with its preview of revision.
func clusterStatus(revision string) *holdfastv1.ClusterServiceStatus {
	diff := make([]string, 12)
	for i := range diff {
		diff[i] = "/spec/template/spec/containers/0/env/" + string(rune('a'+i)) + `: "1" -> "2"`
	}
	return &holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "platform.a"},
		Spec:       holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "platform", Cluster: "a"},
		Status: holdfastv1.ClusterServiceStatusStatus{Preview: &holdfastv1.ClusterPreview{Revision: revision, Outcome: holdfastv1.PreviewChanges,
			Time: metav1.NewTime(fleetviewtest.Now), Digest: "d1", Omitted: 7,
			Changes: []holdfastv1.PreviewChange{
				{Service: "web", Object: "apps/v1 Deployment demo/web", Action: holdfastv1.PreviewUpdate, Diff: diff},
				{Service: "web", Object: "v1 Service demo/old", Action: holdfastv1.PreviewDelete, Diff: []string{"service old is not in the revision: withdrawn"}},
			}}},
	}
}

func TestPrintClusterPreview(t *testing.T) {
	doc, err := NewClusterPreviewList(previewServiceSet(), clusterStatus(previewRevision))
	if err != nil {
		t.Fatal(err)
	}
	out := printPreview(t, doc.Items[0])
	if want := "Revision platform-6f1c9a2b7d of service set platform on cluster fleet/a, previewed 2026-07-01T12:00:00Z: 9 objects would change\n"; !strings.HasPrefix(out, want) {
		t.Errorf("cluster preview does not start with %q:\n%s", want, out)
	}
	// Every diff line, none cut as in the summary, then the objects the controller left out.
	for i := range 12 {
		if want := "  /spec/template/spec/containers/0/env/" + string(rune('a'+i)) + `: "1" -> "2"` + "\n"; !strings.Contains(out, want) {
			t.Errorf("cluster preview lacks line %d %q:\n%s", i, want, out)
		}
	}
	for _, want := range []string{"Update apps/v1 Deployment demo/web [service web]\n", "Delete v1 Service demo/old [service web]\n",
		"  service old is not in the revision: withdrawn\n", "7 more objects left out\n", "Waiting for approval: holdfast rollout approve platform"} {
		if !strings.Contains(out, want) {
			t.Errorf("cluster preview lacks %q:\n%s", want, out)
		}
	}

	css := clusterStatus(previewRevision)
	css.Status.Preview = &holdfastv1.ClusterPreview{Revision: previewRevision, Outcome: holdfastv1.PreviewRefused, Time: metav1.NewTime(fleetviewtest.Now),
		Message: "v1 ConfigMap demo/big: exceeded quota"}
	doc, err = NewClusterPreviewList(previewServiceSet(), css)
	if err != nil {
		t.Fatal(err)
	}
	if out := printPreview(t, doc.Items[0]); !strings.Contains(out, "previewed 2026-07-01T12:00:00Z: refused — v1 ConfigMap demo/big: exceeded quota\n") {
		t.Errorf("refused cluster preview lacks its message:\n%s", out)
	}
}

func TestNewClusterPreviewListRefusesStalePreviews(t *testing.T) {
	progressing := previewServiceSet()
	progressing.Status.Rollout.Phase = holdfastv1.RolloutProgressing
	none := clusterStatus(previewRevision)
	none.Status.Preview = nil
	cases := []struct {
		name string
		mcs  *holdfastv1.MultiClusterService
		css  *holdfastv1.ClusterServiceStatus
		want string
	}{
		{"another revision", previewServiceSet(), clusterStatus("platform-0a1b2c3d4e"),
			"the preview on cluster fleet/a is of revision platform-0a1b2c3d4e, not of the rollout's revision platform-6f1c9a2b7d"},
		{"not previewed yet", previewServiceSet(), none, "cluster fleet/a has not previewed revision platform-6f1c9a2b7d"},
		{"no revision held", progressing, none, "the rollout is Progressing, and clusters preview a revision only while it waits for approval"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := NewClusterPreviewList(c.mcs, c.css); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want one with %q", err, c.want)
			}
		})
	}
}

func TestPreviewVerdict(t *testing.T) {
	summary := func(clusters, noChange, changed, refused int32) PreviewView {
		return PreviewView{Summary: &PreviewSummary{Clusters: clusters, Previewed: noChange + changed + refused, NoChange: noChange, Changed: changed, Refused: refused}}
	}
	cluster := func(outcome holdfastv1.PreviewOutcome) PreviewView {
		return PreviewView{Cluster: &ClusterPreviewView{Outcome: string(outcome)}}
	}
	cases := []struct {
		name    string
		v       PreviewView
		want    holdfastv1.PreviewOutcome
		unknown int
	}{
		{"nothing would change", summary(3, 3, 0, 0), holdfastv1.PreviewNoChange, 0},
		{"changes", summary(3, 1, 2, 0), holdfastv1.PreviewChanges, 0},
		{"a refusal wins over changes", summary(3, 0, 2, 1), holdfastv1.PreviewRefused, 0},
		{"incomplete: by what is known", summary(5, 2, 0, 0), holdfastv1.PreviewNoChange, 3},
		{"cluster refused", cluster(holdfastv1.PreviewRefused), holdfastv1.PreviewRefused, 0},
		{"cluster changes", cluster(holdfastv1.PreviewChanges), holdfastv1.PreviewChanges, 0},
		{"cluster unchanged", cluster(holdfastv1.PreviewNoChange), holdfastv1.PreviewNoChange, 0},
		{"cluster failed", cluster(holdfastv1.PreviewFailed), holdfastv1.PreviewNoChange, 1},
	}
	for _, c := range cases {
		if got, unknown := c.v.Verdict(), c.v.Unknown(); got != c.want || unknown != c.unknown {
			t.Errorf("%s: verdict %s, %d unknown; want %s, %d", c.name, got, unknown, c.want, c.unknown)
		}
	}
}

func TestCheckApproval(t *testing.T) {
	cases := []struct {
		name     string
		change   func(*holdfastv1.MultiClusterService)
		revision string
		err      []string
		warnings []string
	}{
		{name: "previewed, revision given", revision: previewRevision,
			warnings: []string{"1 cluster refused revision platform-6f1c9a2b7d", "failed or cannot be made on 2 clusters"}},
		{name: "a clean preview: no warning", change: func(m *holdfastv1.MultiClusterService) {
			p := m.Status.Rollout.Preview
			p.Refused, p.Failed, p.Unsupported, p.NoChange = 0, 0, 0, 4
		}},
		{name: "incomplete", change: func(m *holdfastv1.MultiClusterService) {
			m.Status.Rollout.Phase, m.Status.Rollout.Preview.Previewed = holdfastv1.RolloutPreviewing, 10
		}, warnings: []string{"previewed on only 10 of 16 clusters", "1 cluster refused", "failed or cannot be made on 2 clusters"}},
		{name: "no preview yet", change: func(m *holdfastv1.MultiClusterService) {
			m.Status.Rollout.Phase, m.Status.Rollout.Preview = holdfastv1.RolloutPreviewing, nil
		}, warnings: []string{"no preview of revision platform-6f1c9a2b7d is recorded yet: you approve it unseen"}},
		{name: "another revision", revision: "platform-0a1b2c3d4e",
			err: []string{"waits for the approval of revision platform-6f1c9a2b7d, not platform-0a1b2c3d4e"}},
		{name: "not held", change: func(m *holdfastv1.MultiClusterService) { m.Status.Rollout.Phase = holdfastv1.RolloutProgressing },
			err: []string{"is Progressing, not waiting for approval (Previewing or Previewed)"}},
		{name: "approval automatic", change: func(m *holdfastv1.MultiClusterService) {
			m.Spec.Rollout.Approval, m.Status.Rollout.Phase = holdfastv1.ApprovalAutomatic, holdfastv1.RolloutComplete
		}, err: []string{"is Complete, not waiting", "set spec.rollout.approval: Manual"}},
		{name: "no rollout", change: func(m *holdfastv1.MultiClusterService) { m.Spec.Rollout = nil }, err: []string{"has no rollout"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mcs := previewServiceSet()
			if c.change != nil {
				c.change(mcs)
			}
			check, err := CheckApproval(mcs, c.revision)
			if len(c.err) > 0 {
				for _, w := range c.err {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("error = %v, want one with %q", err, w)
					}
				}
				return
			}
			if err != nil || check.Revision != previewRevision {
				t.Fatalf("CheckApproval = %+v, %v; want revision %s", check, err, previewRevision)
			}
			if len(check.Warnings) != len(c.warnings) {
				t.Errorf("warnings = %q, want %d", check.Warnings, len(c.warnings))
			}
			for i, w := range c.warnings {
				if i >= len(check.Warnings) || !strings.Contains(check.Warnings[i], w) {
					t.Errorf("warnings = %q, want #%d with %q", check.Warnings, i, w)
				}
			}
		})
	}
}

// The annotation's value names the revision first, then a time that makes it new.
func TestApprovalValue(t *testing.T) {
	now := time.Date(2026, 7, 1, 14, 0, 0, 123456789, time.FixedZone("CEST", 2*3600))
	v := holdfastv1.ApproveValue(previewRevision, now)
	f := strings.Fields(v)
	if len(f) != 2 || f[0] != previewRevision || f[1] != "2026-07-01T12:00:00.123456789Z" {
		t.Errorf("ApproveValue = %q, want the revision, then the time in UTC", v)
	}
}

// A Secret's data, stringData and last-applied annotation are redacted in a creation's YAML,
// lines that continue a value too; the same fields of another kind are shown.
func TestPreviewRedactsSecretCreation(t *testing.T) {
	create := []string{
		"+ apiVersion: v1",
		"+ data:",
		"+   password: " + fleetviewtest.SecretOld,
		"+   long: |",
		"+     " + fleetviewtest.SecretNew,
		"+ kind: Secret",
		"+ metadata:",
		"+   annotations:",
		"+     kubectl.kubernetes.io/last-applied-configuration: |",
		`+       {"stringData":{"token":"` + fleetviewtest.SecretToken + `"}}`,
		"+     team: web",
		"+   name: creds",
		"+ stringData:",
		"+   token: " + fleetviewtest.SecretToken,
		"+ type: Opaque",
		"... 3 more lines",
	}
	want := []string{
		"+ apiVersion: v1",
		"+ data:",
		"+   password: (redacted)",
		"+   long: (redacted)",
		"+ kind: Secret",
		"+ metadata:",
		"+   annotations:",
		"+     kubectl.kubernetes.io/last-applied-configuration: (redacted)",
		"+     team: web",
		"+   name: creds",
		"+ stringData:",
		"+   token: (redacted)",
		"+ type: Opaque",
		"... 3 more lines",
	}
	got := changeViews([]holdfastv1.PreviewChange{{Object: "v1 Secret demo/creds", Action: holdfastv1.PreviewCreate, Diff: create}})[0].Diff
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Secret creation shown as:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	cm := changeViews([]holdfastv1.PreviewChange{{Object: "v1 ConfigMap demo/settings", Action: holdfastv1.PreviewCreate, Diff: create}})[0].Diff
	if strings.Join(cm, "\n") != strings.Join(create, "\n") {
		t.Errorf("a ConfigMap's data was changed:\n%s", strings.Join(cm, "\n"))
	}
}

// `holdfast diff -o json` is a CLI document like the others: envelope, camelCase keys, and
// -o yaml the same document; -o name the object the preview was read from.
func TestPreviewDocument(t *testing.T) {
	doc, err := NewPreviewList(previewServiceSet())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"apiVersion": "holdfast.dev/cli/v1alpha1"`, `"kind": "Preview"`, `"serviceSet": "platform"`, `"approvalPolicy": "Manual"`,
		`"phase": "Previewed"`, `"noChange": 1`, `"omittedGroups": 2`, `"omittedChanges": 4`, `"examples"`, `"object": "apps/v1 Deployment demo/web"`} {
		if !strings.Contains(buf.String(), k) {
			t.Errorf("preview JSON lacks %s:\n%s", k, buf.String())
		}
	}
	if strings.Contains(buf.String(), fleetviewtest.SecretOld) || strings.Contains(buf.String(), `"cluster":`) {
		t.Errorf("preview JSON shows a Secret value, or a cluster preview it has not:\n%s", buf.String())
	}
	var fromJSON, fromYAML PreviewList
	var y bytes.Buffer
	if err := WriteYAML(&y, doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.Unmarshal(y.Bytes(), &fromYAML); err != nil {
		t.Fatal(err)
	}
	if a, b := mustMarshal(t, fromYAML), mustMarshal(t, fromJSON); a != b || len(fromJSON.Items) != 1 || fromJSON.Items[0].Summary == nil {
		t.Errorf("-o yaml:\n%s\nwant the -o json document:\n%s", a, b)
	}

	cdoc, err := NewClusterPreviewList(previewServiceSet(), clusterStatus(previewRevision))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		doc  Named
		want string
	}{{doc, "multiclusterservice.holdfast.dev/platform"}, {cdoc, "clusterservicestatus.holdfast.dev/fleet/platform.a"}} {
		if got := c.doc.Names(); len(got) != 1 || got[0] != c.want {
			t.Errorf("names = %q, want %q", got, c.want)
		}
	}
	if c := cdoc.Items[0].Cluster; c == nil || c.Omitted != 7 || len(c.Changes) != 2 || len(c.Changes[0].Diff) != 12 || !c.Time.Equal(fleetviewtest.Now) {
		t.Errorf("cluster preview = %+v, want its 2 changes whole, 7 omitted, made at %s", c, fleetviewtest.Now)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package webui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview/fleetviewtest"
)

const previewRevision = "apps-7c9d5f"

// previewedSet is service set apps holding previewRevision for approval, with the preview the
// controller summarised: six clusters, three alike with changes, one refused, one failed, one
// with nothing to change.
func previewedSet() *holdfastv1.MultiClusterService {
	return &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "apps"}, Status: holdfastv1.MultiClusterServiceStatus{
		Rollout: &holdfastv1.RolloutStatus{Revision: previewRevision, StableRevision: "apps-1a2b3c", Phase: holdfastv1.RolloutPreviewed,
			Preview: &holdfastv1.RolloutPreview{Revision: previewRevision, Clusters: 6, Previewed: 6, NoChange: 1, Changed: 3, Refused: 1, Failed: 1,
				Digest: "d-all", OmittedGroups: 2, Groups: []holdfastv1.PreviewGroup{{
					Digest: "d1", Outcome: holdfastv1.PreviewChanges, Clusters: 3, Examples: []string{"fleet/c1", "fleet/c2"}, OmittedChanges: 4,
					Changes: []holdfastv1.PreviewChange{
						{Service: "web", Object: "apps/v1 Deployment demo/web", Action: holdfastv1.PreviewUpdate,
							Diff: []string{".spec.replicas: 2 -> 3", ".spec.template.spec.containers[0].image: web:1 -> web:2"}},
						{Service: "web", Object: "v1 Secret demo/web-creds", Action: holdfastv1.PreviewUpdate, Diff: []string{".data.password: (redacted) -> (redacted)"}},
						{Service: "web", Object: "v1 ConfigMap demo/web-flags", Action: holdfastv1.PreviewCreate, Diff: []string{"+ data.beta: \"on\""}},
					},
				}, {
					Digest: "d2", Outcome: holdfastv1.PreviewRefused, Clusters: 1, Examples: []string{"fleet/c4"},
					Message: `apps/v1 Deployment demo/web: admission webhook "policy.example.org" denied the request: image web:2 is not signed`,
					Changes: []holdfastv1.PreviewChange{{Service: "web", Object: "apps/v1 Deployment demo/web", Action: holdfastv1.PreviewRefuse,
						Diff: []string{`admission webhook "policy.example.org" denied the request: image web:2 is not signed`}}},
				}, {
					Digest: "d3", Outcome: holdfastv1.PreviewFailed, Clusters: 1, Examples: []string{"fleet/c5"}, Message: "cluster fleet/c5 is not connected",
				}}},
		},
	}}
}

// TestPreviewPage: the Preview page shows the revision, the counts by outcome, each group of
// clusters with its changes and diff lines, a refusal with the API server's message, what was
// left out, and an Approve button for the revision shown; once approved, who approved it.
func TestPreviewPage(t *testing.T) {
	mcs := previewedSet()
	p := buildPreview(mcs)
	if !p.Held || p.Revision != previewRevision || p.Preview == nil || len(p.Preview.Groups) != 3 || p.Preview.Groups[0].Unnamed != 1 {
		t.Fatalf("page %+v: want revision %s held, a preview of 3 groups, the first naming 2 of its 3 clusters", p, previewRevision)
	}
	html := renderView(t, "preview", p)
	for _, want := range []string{
		"Preview of service set apps", "Revision <code>apps-7c9d5f</code>, phase <strong>Previewed</strong>: waiting for approval",
		"Previewed 6 of 6 clusters.",
		"<dt>No change</dt><dd>1</dd>", "<dt>Changes</dt><dd>3</dd>", "<dt>Refused</dt><dd>1</dd>", "<dt>Failed</dt><dd>1</dd>", "<dt>Unsupported</dt><dd>0</dd>",
		`<strong>3 clusters</strong> (<span class="cluster">fleet/c1</span>, <span class="cluster">fleet/c2</span>, and 1 more)`,
		`<span class="change">Update apps/v1 Deployment demo/web</span>`, ".spec.replicas: 2 -&gt; 3\n.spec.template.spec.containers[0].image: web:1 -&gt; web:2\n",
		".data.password: (redacted) -&gt; (redacted)",
		`<span class="change">Create v1 ConfigMap demo/web-flags</span>`, "&#43; data.beta: &#34;on&#34;",
		"4 more objects not shown.", "2 more groups of clusters not shown.",
		"Refused by the API server: apps/v1 Deployment demo/web: admission webhook &#34;policy.example.org&#34; denied the request: image web:2 is not signed",
		"The preview failed: cluster fleet/c5 is not connected",
		`action="/actions/approve"`, `name="revision" value="apps-7c9d5f"`, `name="set" value="apps"`, `name="back" value="/preview/apps"`,
		"Approve revision apps-7c9d5f",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the Preview page lacks %q", want)
		}
	}
	if strings.Contains(html, "Not every cluster has been previewed yet") || strings.Contains(html, `id="approval"`) {
		t.Errorf("a complete preview, not approved, says it is incomplete or approved")
	}

	mcs.Status.Rollout.Phase = holdfastv1.RolloutPreviewing
	if html := renderView(t, "preview", buildPreview(mcs)); !strings.Contains(html, "Not every cluster has been previewed yet") || !strings.Contains(html, "Approve revision") {
		t.Errorf("while Previewing the page does not offer Approve, saying the preview is incomplete")
	}

	mcs.Status.Rollout.Phase = holdfastv1.RolloutProgressing
	mcs.Status.Rollout.Approval = &holdfastv1.RolloutApproval{Revision: previewRevision, By: "alice@example.org", Verified: true,
		Time: metav1.NewTime(fleetviewtest.Now), PreviewDigest: "d-all", PreviewComplete: true}
	html = renderView(t, "preview", buildPreview(mcs))
	if strings.Contains(html, `action="/actions/approve"`) {
		t.Errorf("a revision rolling out is offered for approval")
	}
	for _, want := range []string{"approved by <strong>alice@example.org</strong> at <time datetime=\"2026-07-01T12:00:00Z\">", "verified: the hub's admission policy recorded"} {
		if !strings.Contains(html, want) {
			t.Errorf("the approved Preview page lacks %q", want)
		}
	}

	mcs.Status.Rollout.Approval.Verified, mcs.Status.Rollout.Approval.PreviewDigest, mcs.Status.Rollout.Approval.PreviewComplete = false, "d-old", false
	html = renderView(t, "preview", buildPreview(mcs))
	for _, want := range []string{"not verified", "approved before every cluster had been previewed", "The preview has changed since it was approved"} {
		if !strings.Contains(html, want) {
			t.Errorf("an unverified approval of an incomplete preview: the page lacks %q", want)
		}
	}

	if html := renderView(t, "preview", buildPreview(&holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "infra"}})); !strings.Contains(html, "has no rollout yet") ||
		strings.Contains(html, `action="/actions/approve"`) {
		t.Errorf("a service set without a rollout: no explanation, or an Approve button")
	}
}

// TestFleetLinksPreview: a service set's column links its Preview page while its rollout holds
// a revision for approval, and once there is a preview; not otherwise.
func TestFleetLinksPreview(t *testing.T) {
	sets := fixtureSets() // infra, apps
	sets[1].Status = previewedSet().Status
	p := buildFleet(fixtureClusters(), sets, fleetviewtest.Statuses(), fleetFilter{})
	links := map[string]string{}
	for _, c := range p.Sets {
		links[c.Name] = c.PreviewLink
	}
	if links["apps"] != "/preview/apps" || links["infra"] != "" {
		t.Fatalf("preview links %v: want apps's only", links)
	}
	html := renderView(t, "fleet", p)
	if !strings.Contains(html, `href="/preview/apps"`) || !strings.Contains(html, "Preview (Previewed, awaiting approval)") || strings.Contains(html, `href="/preview/infra"`) {
		t.Errorf("the fleet page does not link apps's preview (awaiting approval) alone")
	}

	sets[1].Status.Rollout.Phase = holdfastv1.RolloutComplete
	html = renderView(t, "fleet", buildFleet(fixtureClusters(), sets, fleetviewtest.Statuses(), fleetFilter{}))
	if !strings.Contains(html, `href="/preview/apps"`) || strings.Contains(html, "awaiting approval") {
		t.Errorf("a completed rollout with a preview: the link is missing, or says it awaits approval")
	}
	sets[1].Status.Rollout.Preview = nil
	if html := renderView(t, "fleet", buildFleet(fixtureClusters(), sets, fleetviewtest.Statuses(), fleetFilter{})); strings.Contains(html, "/preview/") {
		t.Errorf("a rollout without a preview, not held, is linked to a preview")
	}
}

// TestCheckHeld: an approval goes through only for the revision held for approval.
func TestCheckHeld(t *testing.T) {
	const stale = "the revision changed since this page was loaded; review the new preview"
	for _, tc := range []struct {
		name     string
		rollout  *holdfastv1.RolloutStatus
		revision string
		want     string // "" for allowed, else part of the refusal
	}{
		{"previewed", &holdfastv1.RolloutStatus{Revision: "r2", Phase: holdfastv1.RolloutPreviewed}, "r2", ""},
		{"previewing", &holdfastv1.RolloutStatus{Revision: "r2", Phase: holdfastv1.RolloutPreviewing}, "r2", ""},
		{"another revision held", &holdfastv1.RolloutStatus{Revision: "r3", Phase: holdfastv1.RolloutPreviewing}, "r2", stale},
		{"rolling out", &holdfastv1.RolloutStatus{Revision: "r2", Phase: holdfastv1.RolloutProgressing}, "r2", "is Progressing, not waiting for approval"},
		{"no rollout", nil, "r2", "has no rollout status yet"},
	} {
		err := checkHeld(&holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "apps"},
			Spec:   holdfastv1.MultiClusterServiceSpec{Rollout: &holdfastv1.RolloutStrategy{Approval: holdfastv1.ApprovalManual}},
			Status: holdfastv1.MultiClusterServiceStatus{Rollout: tc.rollout}}, tc.revision)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestApproveFormChecks: an approval passes the same checks as every action (another site's
// is refused), names what it lacks, and a browser without JavaScript is sent back to the
// Preview page it came from, never elsewhere.
func TestApproveFormChecks(t *testing.T) {
	h, cookie := signedInHandler(t)
	post := func(body string, header map[string]string) *httptest.ResponseRecorder {
		req := request(http.MethodPost, "/actions/approve", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(cookie)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := post("set=apps&revision=r2", map[string]string{"Sec-Fetch-Site": "cross-site"}); rec.Code != http.StatusForbidden {
		t.Errorf("a cross-site approval: %d, want 403", rec.Code)
	}
	rec := post("set=apps&back=%2Fpreview%2Fapps", map[string]string{"Sec-Fetch-Site": "same-origin"})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "the revision the page showed (revision)") || !strings.Contains(rec.Body.String(), `href="/preview/apps"`) {
		t.Errorf("an approval without a revision: %d %s; want 400 naming it, back to the Preview page", rec.Code, rec.Body)
	}
	rec = post("set=apps&back=%2Fpreview%2Fother", map[string]string{"Sec-Fetch-Site": "same-origin"})
	if !strings.Contains(rec.Body.String(), `href="/"`) {
		t.Errorf("back to another service set's page than the form's: %s; want back to the fleet", rec.Body)
	}
}

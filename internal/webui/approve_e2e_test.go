package webui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/testsupport"
)

const (
	heldSet      = "checkout"
	heldRevision = "checkout-5d8f7b"
	nextRevision = "checkout-9e1a2c"
)

// TestApproveFromPreviewPage serves the web view against a real hub, where a service set holds
// a revision for approval with the preview the controller would have summarised (no controller
// runs: the hub is left as the test sets it), and uses the page as a browser without JavaScript
// would, with plain HTTP: the fleet links the Preview page, which shows the preview and offers
// to approve the revision it shows; once the service set holds another revision, approving the
// one the page showed is refused, saying so; a user whose RBAC does not allow patching the
// service set gets the API server's refusal; the Approve button writes the annotation for the
// revision shown, with the user's credentials, new each time. Each refusal leaves the service
// set unapproved.
func TestApproveFromPreviewPage(t *testing.T) {
	testsupport.RequireBinaries(t)
	ctx := t.Context()
	logs := &testsupport.LogBuffer{}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.UseDevMode(true)))
	logs.ShowOnFailure(t, "", 60)

	fl, err := localfleet.Up(ctx, localfleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fl.Stop() })
	hub := fl.HubClient()
	mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: heldSet}, Spec: holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "sandbox"}}},
		Services:        []holdfastv1.Service{{Name: "web", Template: holdfastv1.TemplateReference{Namespace: templateNS, Name: "web"}, Namespace: appNamespace}},
		Rollout:         &holdfastv1.RolloutStrategy{Approval: holdfastv1.ApprovalManual},
	}}
	if err := hub.Create(ctx, mcs); err != nil {
		t.Fatal(err)
	}
	hold(t, hub, heldRevision, holdfastv1.RolloutPreviewed)

	admin := serveUI(t, fl.Hub.RESTConfig())
	viewerCfg := rest.CopyConfig(fl.Hub.RESTConfig())
	viewerCfg.Impersonate = rest.ImpersonationConfig{UserName: viewerUser}
	grantViewer(t, hub)
	viewer := serveUI(t, viewerCfg)

	if page := get(t, admin, "/"); !strings.Contains(page, `href="/preview/`+heldSet+`"`) || !strings.Contains(page, "Preview (Previewed, awaiting approval)") {
		t.Errorf("the fleet does not link the Preview page of %s", heldSet)
	}
	page := get(t, admin, "/preview/"+heldSet)
	for _, want := range []string{"Previewed 2 of 3 clusters.", "<dt>Changes</dt><dd>1</dd>", "<dt>Refused</dt><dd>1</dd>",
		`<strong>1 cluster</strong> (<span class="cluster">fleet/c1</span>)`, `<span class="change">Update apps/v1 Deployment shop/web</span>`,
		".spec.replicas: 2 -&gt; 3", "Refused by the API server: apps/v1 Deployment shop/web: quota exceeded", "Approve revision " + heldRevision} {
		if !strings.Contains(page, want) {
			t.Errorf("the Preview page lacks %q", want)
		}
	}
	m := regexp.MustCompile(`name="revision" value="([^"]*)"`).FindStringSubmatch(page)
	if m == nil || m[1] != heldRevision {
		t.Fatalf("the Approve form's revision: %v, want %s", m, heldRevision)
	}
	shown := m[1]

	t.Run("a revision that changed since the page was loaded is not approved", func(t *testing.T) {
		hold(t, hub, nextRevision, holdfastv1.RolloutPreviewing)
		code, res := approve(t, admin, shown)
		if code != http.StatusConflict || res.OK || !strings.Contains(res.Message, "the revision changed since this page was loaded; review the new preview") {
			t.Errorf("approving %s while %s is held: %d %+v; want 409 saying the revision changed", shown, nextRevision, code, res)
		}
		if v := approval(t, hub); v != "" {
			t.Errorf("after a refused approval the service set carries %s=%q", holdfastv1.RolloutApproveAnnotation, v)
		}
		waitPage(t, admin, "/preview/"+heldSet, `name="revision" value="`+nextRevision+`"`)
	})

	t.Run("a user without permission gets the refusal", func(t *testing.T) {
		code, res := approve(t, viewer, nextRevision)
		if code != http.StatusForbidden || res.OK || !strings.Contains(res.Message, `User "viewer" cannot patch resource "multiclusterservices"`) {
			t.Errorf("the viewer's approval: %d %+v; want 403 with the API server's reason", code, res)
		}
		if v := approval(t, hub); v != "" {
			t.Errorf("after a forbidden approval the service set carries %s=%q", holdfastv1.RolloutApproveAnnotation, v)
		}
	})

	t.Run("Approve writes the annotation for the revision shown", func(t *testing.T) {
		before := time.Now().UTC()
		code, res := approve(t, admin, nextRevision)
		if code != http.StatusOK || !res.OK || !strings.Contains(res.Message, "Approved revision "+nextRevision+" of service set "+heldSet) {
			t.Fatalf("approving %s: %d %+v", nextRevision, code, res)
		}
		first := approval(t, hub)
		rev, at, ok := strings.Cut(first, " ")
		when, err := time.Parse(time.RFC3339Nano, at)
		if !ok || rev != nextRevision || err != nil || when.Before(before.Truncate(time.Second)) || when.Location() != time.UTC {
			t.Fatalf("%s=%q: want %q then the time of the approval, RFC 3339 in UTC", holdfastv1.RolloutApproveAnnotation, first, nextRevision)
		}
		// Without JavaScript: the answer is a page that leads back to the Preview page, and a
		// second approval is a new value.
		code, body := post(t, admin, "/actions/approve", url.Values{"set": {heldSet}, "revision": {nextRevision}, "back": {"/preview/" + heldSet}}, false)
		if code != http.StatusOK || !strings.Contains(body, "Approved revision "+nextRevision) || !strings.Contains(body, `href="/preview/`+heldSet+`"`) {
			t.Errorf("the answer page without JavaScript: %s", body)
		}
		if again := approval(t, hub); again == first || !strings.HasPrefix(again, nextRevision+" ") {
			t.Errorf("a second approval left %q (was %q): want a new value for the same revision", again, first)
		}
	})

	t.Run("a revision no longer held is not approved", func(t *testing.T) {
		hold(t, hub, nextRevision, holdfastv1.RolloutProgressing)
		before := approval(t, hub)
		code, res := approve(t, admin, nextRevision)
		if code != http.StatusConflict || !strings.Contains(res.Message, "is Progressing, not waiting for approval") {
			t.Errorf("approving a revision rolling out: %d %+v; want 409", code, res)
		}
		if v := approval(t, hub); v != before {
			t.Errorf("a refused approval changed the annotation from %q to %q", before, v)
		}
	})
}

// hold sets the service set's rollout status as the controller does while it holds revision
// for approval, with a preview of it on two of three clusters: one with changes, one refused.
func hold(t *testing.T, hub client.Client, revision string, phase holdfastv1.RolloutPhase) {
	t.Helper()
	mcs := &holdfastv1.MultiClusterService{}
	if err := hub.Get(t.Context(), client.ObjectKey{Name: heldSet}, mcs); err != nil {
		t.Fatal(err)
	}
	mcs.Status.Rollout = &holdfastv1.RolloutStatus{Revision: revision, StableRevision: "checkout-1b2c3d", Phase: phase,
		Preview: &holdfastv1.RolloutPreview{Revision: revision, Clusters: 3, Previewed: 2, Changed: 1, Refused: 1, Digest: "all-" + revision,
			Groups: []holdfastv1.PreviewGroup{{
				Digest: "d1", Outcome: holdfastv1.PreviewChanges, Clusters: 1, Examples: []string{"fleet/c1"},
				Changes: []holdfastv1.PreviewChange{{Service: "web", Object: "apps/v1 Deployment shop/web", Action: holdfastv1.PreviewUpdate, Diff: []string{".spec.replicas: 2 -> 3"}}},
			}, {
				Digest: "d2", Outcome: holdfastv1.PreviewRefused, Clusters: 1, Examples: []string{"fleet/c2"}, Message: "apps/v1 Deployment shop/web: quota exceeded",
			}}}}
	if err := hub.Status().Update(t.Context(), mcs); err != nil {
		t.Fatal(err)
	}
}

// approval is the service set's approval annotation on the hub.
func approval(t *testing.T, hub client.Client) string {
	t.Helper()
	mcs := &holdfastv1.MultiClusterService{}
	if err := hub.Get(t.Context(), client.ObjectKey{Name: heldSet}, mcs); err != nil {
		t.Fatal(err)
	}
	return mcs.Annotations[holdfastv1.RolloutApproveAnnotation]
}

type answer struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// approve presses Approve for revision as the page's script does, and returns the answer.
func approve(t *testing.T, ui served, revision string) (int, answer) {
	t.Helper()
	code, body := post(t, ui, "/actions/approve", url.Values{"set": {heldSet}, "revision": {revision}}, true)
	var res answer
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("the answer %q: %v", body, err)
	}
	return code, res
}

// post posts a form from the page, as a client that opened the printed URL first; as the
// page's script (asScript), the answer is JSON, else a page.
func post(t *testing.T, ui served, path string, form url.Values, asScript bool) (int, string) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar}
	resp, err := c.Get(ui.printed)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ui.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if asScript {
		req.Header.Set("Accept", "application/json")
	}
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// waitPage waits until the page at path (built from the server's cache, which follows the hub
// a moment later) contains want.
func waitPage(t *testing.T, ui served, path, want string) {
	t.Helper()
	var page string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, uiTimeout, true, func(context.Context) (bool, error) {
		page = get(t, ui, path)
		return strings.Contains(page, want), nil
	})
	if err != nil {
		t.Fatalf("%s never showed %q: %v; the last page:\n%s", path, want, err, page)
	}
}

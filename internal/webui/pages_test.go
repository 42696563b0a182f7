package webui

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/fleetview/fleetviewtest"
)

// fixtureClusters are the Clusters of fleetviewtest's status objects, and one without any.
func fixtureClusters() []holdfastv1.Cluster {
	cl := func(ns, name string, labels map[string]string) holdfastv1.Cluster {
		return holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	}
	return []holdfastv1.Cluster{
		cl("fleet", "c2", map[string]string{"env": "prod"}), cl("fleet", "c1", map[string]string{"env": "staging"}),
		cl("other", "c1", nil), cl("fleet", "empty", map[string]string{"env": "prod"}),
	}
}

func fixtureSets() []holdfastv1.MultiClusterService {
	return []holdfastv1.MultiClusterService{
		{ObjectMeta: metav1.ObjectMeta{Name: "infra"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "apps"}, Spec: holdfastv1.MultiClusterServiceSpec{Paused: true}},
	}
}

// renderView renders a view to HTML as the server would.
func renderView(t *testing.T, view string, data any) string {
	t.Helper()
	tpl, err := parseTemplates()
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	tpl.render(rec, view, false, http.StatusOK, page{Title: view, Now: fleetviewtest.Now, View: data})
	if rec.Code != http.StatusOK {
		t.Fatalf("rendering %s: %d %s", view, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func TestFleetMatrix(t *testing.T) {
	p := buildFleet(fixtureClusters(), fixtureSets(), fleetviewtest.Statuses(), fleetFilter{})
	if len(p.Rows) != 4 || len(p.Sets) != 2 || p.Sets[0].Name != "apps" || !p.Sets[0].Paused {
		t.Fatalf("rows %d, sets %+v: want 4 clusters by apps (paused), infra", len(p.Rows), p.Sets)
	}
	c1 := p.Rows[0] // fleet/c1, sorted
	if c1.Name != "c1" || c1.Namespace != "fleet" {
		t.Fatalf("first row %s/%s, want fleet/c1", c1.Namespace, c1.Name)
	}
	apps := c1.Cells[0]
	if !apps.Present || apps.Drift != DriftContested || apps.Drifted != 3 || apps.Ready != "False" || apps.LastChange == nil {
		t.Errorf("fleet/c1 apps = %+v, want present, Contested (3 objects not as declared), not Ready, a last change", apps)
	}
	if c1.Cells[1].Present {
		t.Errorf("fleet/c1 infra is present; infra is only on other/c1")
	}
	if c2 := p.Rows[1].Cells[0]; c2.Drift != DriftNone || !c2.Paused || c2.Health != "Unknown" {
		t.Errorf("fleet/c2 apps = %+v, want no drift, paused", c2)
	}

	for _, tc := range []struct {
		name   string
		filter fleetFilter
		want   []string
	}{
		{"labels", fleetFilter{Labels: "env=prod"}, []string{"fleet/c2", "fleet/empty"}},
		{"labels with set", fleetFilter{Labels: "env in (prod,staging)", ServiceSet: "apps"}, []string{"fleet/c1", "fleet/c2", "fleet/empty"}},
		{"drifted", fleetFilter{State: stateDrifted}, []string{"fleet/c1"}},
		{"not ready", fleetFilter{State: stateNotReady}, []string{"fleet/c1", "fleet/c2", "other/c1"}},
		{"contested", fleetFilter{State: stateContested}, []string{"fleet/c1"}},
		{"waiting", fleetFilter{State: stateWaiting}, nil},
	} {
		p := buildFleet(fixtureClusters(), fixtureSets(), fleetviewtest.Statuses(), tc.filter)
		var got []string
		for _, r := range p.Rows {
			got = append(got, r.Namespace+"/"+r.Name)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") || p.FilterError != "" {
			t.Errorf("%s: rows %v (error %q), want %v", tc.name, got, p.FilterError, tc.want)
		}
	}
	bad := buildFleet(fixtureClusters(), fixtureSets(), fleetviewtest.Statuses(), fleetFilter{Labels: "env in prod"})
	if !strings.Contains(bad.FilterError, "env in prod") || len(bad.Rows) != 4 {
		t.Errorf("an invalid selector: error %q, %d rows; want the selector named and every cluster", bad.FilterError, len(bad.Rows))
	}

	html := renderView(t, "fleet", p)
	for _, want := range []string{"fleet/c1", "other/c1", "Drift: Contested (3)", "Not Ready (ApplyFailed)", "Resume<span", "env=staging",
		`href="/drift?cluster=fleet%2Fc1&amp;set=apps"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the fleet page lacks %q", want)
		}
	}
}

func TestDriftStates(t *testing.T) {
	css := &holdfastv1.ClusterServiceStatus{}
	if got := driftStateOf(css); got != DriftNone {
		t.Errorf("no records: %s", got)
	}
	css.Status.Drifts = []holdfastv1.DriftRecord{{CorrectedTime: &metav1.MicroTime{Time: time.Now()}}}
	if got := driftStateOf(css); got != DriftCorrected {
		t.Errorf("a corrected record: %s", got)
	}
	css.Status.Conditions = []metav1.Condition{{Type: holdfastv1.DriftedCondition, Status: metav1.ConditionTrue, Reason: holdfastv1.DriftReportedReason}}
	if got := driftStateOf(css); got != DriftWaiting {
		t.Errorf("Drifted True (Report): %s", got)
	}
	css.Status.Conditions = append(css.Status.Conditions, metav1.Condition{Type: holdfastv1.ContestedCondition, Status: metav1.ConditionTrue})
	if got := driftStateOf(css); got != DriftContested {
		t.Errorf("Contested True: %s", got)
	}
}

func TestDriftFeed(t *testing.T) {
	statuses := fleetviewtest.Statuses()
	p := buildDrift(statuses, statusSets(statuses), driftFilter{})
	if len(p.Waiting) != 3 || p.Total != 5 || len(p.History) != 5 {
		t.Fatalf("waiting %d, history %d of %d; want 3 objects not as declared and 5 records", len(p.Waiting), len(p.History), p.Total)
	}
	actions := map[string]string{}
	for _, it := range p.Waiting {
		actions[it.Object.Kind] = it.Action
	}
	if actions["Secret"] != actionResume || actions["Deployment"] != actionCorrect {
		t.Errorf("actions %v: want Resume on the Contested Secret, Correct now on the drifted Deployment", actions)
	}
	if first := p.History[0]; first.Object.Kind != "Secret" || first.Author != "rotator (Apply)" {
		t.Errorf("newest record %s by %s, want the Secret by rotator (Apply)", first.Object.Kind, first.Author)
	}
	for _, tc := range []struct {
		filter driftFilter
		want   int
	}{
		{driftFilter{Author: "kubectl-edit"}, 2},
		{driftFilter{Kind: "deployment"}, 1},
		{driftFilter{Cluster: "fleet/c2"}, 0},
		{driftFilter{Cluster: "c1", ServiceSet: "apps"}, 5},
		{parseDriftFilter(url.Values{"cluster": {"fleet/c1"}, "set": {"apps"}, "kind": {"Secret"}, "namespace": {"shop"}, "name": {"creds"}}), 2},
	} {
		if got := buildDrift(statuses, nil, tc.filter); got.Total != tc.want {
			t.Errorf("filter %+v: %d records, want %d", tc.filter, got.Total, tc.want)
		}
	}

	html := renderView(t, "drift", p)
	for _, secret := range []string{fleetviewtest.SecretOld, fleetviewtest.SecretNew, fleetviewtest.SecretToken} {
		if strings.Contains(html, secret) {
			t.Errorf("the drift page shows the Secret value %q", secret)
		}
	}
	for _, want := range []string{"kubectl-scale (Update/scale)", "<code>.spec.replicas</code>", `<code class="old">2</code>`, `<code class="new">5</code>`,
		"Correct now<span", "Resume<span", "350ms", "unknown"} {
		if !strings.Contains(html, want) {
			t.Errorf("the drift page lacks %q", want)
		}
	}
}

// TestHostileValuesAreEscaped: what a target cluster writes (field values, managers, names)
// reaches the page as text, never as markup.
func TestHostileValuesAreEscaped(t *testing.T) {
	css := fleetviewtest.Statuses()[2]
	css.Status.Drifts = []holdfastv1.DriftRecord{{ResourceRef: fleetviewtest.ConfigMapRef, Service: "web", DriftDetail: holdfastv1.DriftDetail{
		Type: holdfastv1.DriftChanged, Manager: `<img src=x onerror=alert(1)>`, DetectedTime: metav1.NowMicro(),
		Fields: []holdfastv1.FieldChange{{Path: `.data.x`, New: `"</code><script>alert(2)</script>"`}},
	}}}
	html := renderView(t, "drift", buildDrift([]holdfastv1.ClusterServiceStatus{css}, nil, driftFilter{}))
	for _, bad := range []string{"<img src=x", "<script>alert"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page holds markup from a target: %q", bad)
		}
	}
	if !strings.Contains(html, "&lt;script&gt;alert(2)") {
		t.Errorf("the hostile value is not shown escaped")
	}
}

func TestCharts(t *testing.T) {
	history := fleetview.BuildDriftHistory(fleetviewtest.Statuses(), fleetview.Filter{}, time.Time{}, 0).Items
	p := buildCharts(history, fleetviewtest.Now)
	if p.Corrected != 2 || p.Median != "350ms" || p.P99 != "2s" {
		t.Errorf("corrected %d, median %s, p99 %s; want 2, 350ms, 2s", p.Corrected, p.Median, p.P99)
	}
	counts := map[string]int{}
	for _, b := range p.Latency.Bars {
		counts[b.Label] = b.Count
	}
	if counts["≤ 500ms"] != 1 || counts["≤ 2.5s"] != 1 {
		t.Errorf("latency buckets %v", counts)
	}
	// The records are 1 to 20 minutes before 12:00: all in the 11h bar, the one before the
	// current hour's.
	if prev := p.PerHour.Bars[len(p.PerHour.Bars)-2]; prev.Count != 5 || prev.Label != "11h" {
		t.Errorf("drifts in the hour before now: %+v, want 5 at 11h", prev)
	}
	heights := map[string]int{}
	for _, b := range p.Latency.Bars {
		heights[b.Label] = b.H
	}
	if heights["≤ 1ms"] != 0 || heights["≤ 2.5ms"] != 0 || heights["≤ 500ms"] != chartHeight-chartBottom-chartTop {
		t.Errorf("bar heights not scaled to the largest: %+v", p.Latency.Bars)
	}
	html := renderView(t, "charts", p)
	if !strings.Contains(html, "<svg") || !strings.Contains(html, "median latency 350ms") {
		t.Errorf("the charts page lacks its chart")
	}
}

// TestActionsFromOtherSites: a form another web site posts to the page's server is refused
// before it reaches the hub; a request that names no pair is refused naming what it lacks.
func TestActionsFromOtherSites(t *testing.T) {
	h, cookie := signedInHandler(t)
	post := func(path, body string, header map[string]string) *httptest.ResponseRecorder {
		req := request(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(cookie)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, header := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Origin": "https://evil.example"},
	} {
		if rec := post("/actions/correct", "set=shop&cluster=ns/c1", header); rec.Code != http.StatusForbidden {
			t.Errorf("a cross-origin correction (%v): %d, want 403", header, rec.Code)
		}
		if rec := post("/actions/pause", "set=shop&paused=true", header); rec.Code != http.StatusForbidden {
			t.Errorf("a cross-origin pause (%v): %d, want 403", header, rec.Code)
		}
	}
	rec := post("/actions/correct", "set=shop&cluster=c1", map[string]string{"Sec-Fetch-Site": "same-origin", "Accept": "application/json"})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "namespace/name") {
		t.Errorf("a correction without a cluster namespace: %d %s", rec.Code, rec.Body)
	}
	rec = post("/actions/pause", "set=shop&paused=maybe", map[string]string{"Sec-Fetch-Site": "same-origin"})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "paused=true|false") {
		t.Errorf("a pause with paused=maybe: %d %s", rec.Code, rec.Body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
}

package fleetview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview/fleetviewtest"
)

func rowKeys(items []ServiceState) []string {
	var out []string
	for _, r := range items {
		out = append(out, r.ClusterNamespace+"/"+r.Cluster+" "+r.ServiceSet+" "+r.Service)
	}
	return out
}

func TestBuildFleetStatus(t *testing.T) {
	fs := BuildFleetStatus(fleetviewtest.Statuses(), Filter{})
	want := []string{"fleet/c1 apps web", "fleet/c1 apps cache", "fleet/c2 apps web", "other/c1 infra "}
	if got := rowKeys(fs.Items); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("rows = %q, want %q (by cluster, service set, then declaration order)", got, want)
	}
	web, cache, paused, empty := fs.Items[0], fs.Items[1], fs.Items[2], fs.Items[3]
	if web.DriftedObjects != 2 || web.Objects != 3 || web.Ready != "True" || web.SyncMode != "ContinuousWithDriftDetection" {
		t.Errorf("web on c1 = %+v, want 2 of 3 objects drifted (Drifted and Contested), Ready True", web)
	}
	if web.LastDriftTime == nil || !web.LastDriftTime.Equal(fleetviewtest.Now.Add(-time.Minute)) {
		t.Errorf("web on c1: lastDriftTime = %v, want the newest web record, 1m ago", web.LastDriftTime)
	}
	if cache.DriftedObjects != 1 || cache.Ready != "False" || cache.Reason != "Drifted" || cache.Message == "" {
		t.Errorf("cache on c1 = %+v, want 1 Missing object, not ready with reason and message", cache)
	}
	if !paused.Paused || paused.DriftedObjects != 0 || paused.LastDriftTime != nil {
		t.Errorf("web on c2 = %+v, want paused, no drift", paused)
	}
	if empty.Ready != "False" || empty.Reason != holdfastv1.ClusterNotReadyReason || empty.Service != "" {
		t.Errorf("infra on other/c1 = %+v, want the status object's Ready condition", empty)
	}
	if web.StatusName != "apps.c1" || web.Revision != fleetviewtest.WebRevision || web.ObservedServiceSetGeneration != 3 ||
		web.LastAppliedTime == nil || !web.LastAppliedTime.Equal(fleetviewtest.Now.Add(-30*time.Minute)) ||
		web.LastFullReconcileTime == nil || !web.LastFullReconcileTime.Equal(fleetviewtest.Now.Add(-5*time.Minute)) {
		t.Errorf("web on c1 = %+v, want its status object, revision, last applied 30m ago, last full reconcile 5m ago, generation 3", web)
	}
	if empty.StatusName != "infra.c1" || empty.Revision != "" || empty.LastAppliedTime != nil || empty.LastFullReconcileTime != nil {
		t.Errorf("infra on other/c1 = %+v, want its status object and nothing reconciled yet", empty)
	}
	wantSummary := FleetSummary{Clusters: 3, ServiceSets: 2, Services: 4, Ready: 2, NotReady: 2, DriftedObjects: 3, ClustersWithDrift: 1}
	if fs.Summary != wantSummary {
		t.Errorf("summary = %+v, want %+v", fs.Summary, wantSummary)
	}
}

func TestFleetFilters(t *testing.T) {
	cases := []struct {
		name   string
		filter Filter
		want   []string
	}{
		{"cluster name in any namespace", Filter{Cluster: "c1"}, []string{"fleet/c1 apps web", "fleet/c1 apps cache", "other/c1 infra "}},
		{"cluster in a namespace", Filter{ClusterNamespace: "fleet", Cluster: "c1"}, []string{"fleet/c1 apps web", "fleet/c1 apps cache"}},
		{"namespace", Filter{ClusterNamespace: "fleet"}, []string{"fleet/c1 apps web", "fleet/c1 apps cache", "fleet/c2 apps web"}},
		{"service set", Filter{ServiceSet: "infra"}, []string{"other/c1 infra "}},
		{"service", Filter{Service: "web"}, []string{"fleet/c1 apps web", "fleet/c2 apps web"}},
		{"nothing matches", Filter{Cluster: "c9"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := rowKeys(BuildFleetStatus(fleetviewtest.Statuses(), c.filter).Items); strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("rows = %q, want %q", got, c.want)
			}
		})
	}
}

func TestPrintFleetStatus(t *testing.T) {
	var buf bytes.Buffer
	if err := PrintFleetStatus(&buf, BuildFleetStatus(fleetviewtest.Statuses(), Filter{}), fleetviewtest.Now); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, want := range []string{"CLUSTER", "SERVICE SET", "HEALTH", "DRIFTED", "LAST DRIFT"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("header %q lacks %q", lines[0], want)
		}
	}
	checks := []struct {
		line int
		want []string
	}{
		{1, []string{"fleet/c1", "apps", "web", "True", "Current", "ContinuousWithDriftDetection", " 3 ", " 2 ", "60s ago"}},
		{2, []string{"fleet/c1", "cache", "False", "Drifted", "2m ago", "Service shop/cache was deleted"}},
		// In place but not healthy: the row says why.
		{3, []string{"fleet/c2", "(paused)", "InProgress", fleetviewtest.WebHealthMessage}},
		{4, []string{"other/c1", "infra", "ClusterNotReady"}},
	}
	for _, c := range checks {
		for _, w := range c.want {
			if !strings.Contains(lines[c.line], w) {
				t.Errorf("line %d %q lacks %q", c.line, lines[c.line], w)
			}
		}
	}
	wantSummary := "3 clusters, 2 service sets, 4 services: 2 ready, 2 not ready; 3 drifted objects on 1 cluster."
	if last := lines[len(lines)-1]; last != wantSummary {
		t.Errorf("summary = %q, want %q", last, wantSummary)
	}

	buf.Reset()
	if err := PrintFleetStatus(&buf, BuildFleetStatus(nil, Filter{}), fleetviewtest.Now); err != nil || !strings.Contains(buf.String(), "No service set") {
		t.Errorf("empty fleet printed %q, %v", buf.String(), err)
	}
}

func driftKeys(items []DriftedObject) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Cluster+" "+it.Service+" "+it.Object.Kind+" "+it.State)
	}
	return out
}

func TestBuildDriftList(t *testing.T) {
	cases := []struct {
		name   string
		filter Filter
		all    bool
		want   []string
	}{
		{"current drift, by service then object", Filter{}, false,
			[]string{"c1 cache Service Missing", "c1 web Deployment Drifted", "c1 web Secret Contested"}},
		{"with corrected records, newest first", Filter{}, true,
			[]string{"c1 cache Service Missing", "c1 web Deployment Drifted", "c1 web Secret Contested", "c1 web ConfigMap Corrected", "c1 web Secret Corrected"}},
		{"one service", Filter{Service: "cache"}, true, []string{"c1 cache Service Missing"}},
		{"a cluster without drift", Filter{Cluster: "c2"}, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := driftKeys(BuildDriftList(fleetviewtest.Statuses(), c.filter, c.all).Items); strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("items = %q, want %q", got, c.want)
			}
		})
	}

	dl := BuildDriftList(fleetviewtest.Statuses(), Filter{}, true)
	dep := dl.Items[1].Drift
	if dep == nil || dep.Manager != "kubectl-scale" || dep.Subresource != "scale" || dep.Detection != "Watch" || dep.CorrectedTime != nil {
		t.Errorf("Deployment drift = %+v, want kubectl-scale through scale, by watch, not corrected", dep)
	}
	cm := dl.Items[3].Drift
	if cm.CorrectionLatencySeconds == nil || *cm.CorrectionLatencySeconds < 0.349 || *cm.CorrectionLatencySeconds > 0.351 {
		t.Errorf("ConfigMap correction latency = %v, want 0.35s", cm.CorrectionLatencySeconds)
	}
}

func TestPrintDriftList(t *testing.T) {
	var buf bytes.Buffer
	if err := PrintDriftList(&buf, BuildDriftList(fleetviewtest.Statuses(), Filter{}, true), fleetviewtest.Now); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Deployment.apps shop/web", "Drifted", "kubectl-scale (Update/scale)", ".spec.replicas: 2 -> 5", "3m ago",
		"Service shop/cache", "Missing", "(object deleted)", "(comparison)", "unknown",
		"Secret shop/creds", "Contested", "rotator (Apply)", `.metadata.labels.tier: "gold" -> "silver"`, "# rotator keeps reverting it",
		"Corrected in 350ms", `.data.logLevel: "info" -> "trace"`,
		".data.password: (redacted) -> (redacted)", ".stringData.token: (absent) -> (redacted)",
		"3 drifted objects (1 Contested), 2 corrected drifts.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("drift table lacks %q:\n%s", want, out)
		}
	}
	// A second changed field goes on its own row, under the DIFF column.
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.Contains(l, ".data.password") {
			next := lines[i+1]
			if strings.Index(next, ".metadata.labels.tier") != strings.Index(l, ".data.password") {
				t.Errorf("continuation row not aligned under the diff:\n%s\n%s", l, next)
			}
		}
	}
}

func TestBuildDriftHistory(t *testing.T) {
	h := BuildDriftHistory(fleetviewtest.Statuses(), Filter{}, time.Time{}, 0)
	var got []string
	for _, it := range h.Items {
		got = append(got, it.Object.Kind)
	}
	want := []string{"Secret", "Service", "Deployment", "ConfigMap", "Secret"}
	if strings.Join(got, ",") != strings.Join(want, ",") || h.Total != 5 {
		t.Fatalf("history = %v (total %d), want %v newest first", got, h.Total, want)
	}
	for i := 1; i < len(h.Items); i++ {
		if h.Items[i].Drift.DetectedTime.After(h.Items[i-1].Drift.DetectedTime) {
			t.Errorf("record %d is newer than record %d", i, i-1)
		}
	}
	if l := h.Items[4].Drift.CorrectionLatencySeconds; l == nil || *l != 2 {
		t.Errorf("latency of the corrected Secret record = %v, want 2s", l)
	}

	recent := BuildDriftHistory(fleetviewtest.Statuses(), Filter{}, fleetviewtest.Now.Add(-5*time.Minute), 2)
	if len(recent.Items) != 2 || recent.Total != 3 || recent.Items[0].Object.Kind != "Secret" || recent.Items[1].Object.Kind != "Service" {
		t.Errorf("--since 5m --limit 2 = %+v, want the 2 newest of 3", recent)
	}
	if h := BuildDriftHistory(fleetviewtest.Statuses(), Filter{ServiceSet: "apps", Service: "cache"}, time.Time{}, 0); h.Total != 1 {
		t.Errorf("--service cache: %d records, want 1", h.Total)
	}

	var buf bytes.Buffer
	if err := PrintDriftHistory(&buf, recent); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"DETECTED", "LATENCY", "2026-07-01T11:59:00Z", "(+1 more)", "(comparison)", "2 drift records of 3 (--limit 0 shows all)"} {
		if !strings.Contains(out, want) {
			t.Errorf("history table lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := PrintDriftHistory(&buf, h); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "2026-07-01T11:40:02Z") || !strings.Contains(buf.String(), "2s") {
		t.Errorf("history table lacks the corrected time and latency:\n%s", buf.String())
	}
}

func TestSecretDataIsRedacted(t *testing.T) {
	cases := []struct {
		ref  holdfastv1.ResourceRef
		path string
		want bool
	}{
		{fleetviewtest.SecretRef, ".data.password", true},
		{fleetviewtest.SecretRef, ".data", true},
		{fleetviewtest.SecretRef, ".stringData.token", true},
		{fleetviewtest.SecretRef, "/data/password", true},
		{fleetviewtest.SecretRef, `.data[key="x"]`, true},
		{fleetviewtest.SecretRef, "", true},
		{fleetviewtest.SecretRef, ".metadata.labels.tier", false},
		{fleetviewtest.SecretRef, ".database", false},
		{fleetviewtest.SecretRef, ".type", false},
		{fleetviewtest.ConfigMapRef, ".data.password", false},
		{fleetviewtest.Ref("example.com", "Secret", "shop", "x"), ".data.password", false},
	}
	for _, c := range cases {
		if got := secretData(c.ref, c.path); got != c.want {
			t.Errorf("secretData(%s %s, %q) = %v, want %v", c.ref.Group, c.ref.Kind, c.path, got, c.want)
		}
	}

	// Every output of every verb that shows values.
	statuses := fleetviewtest.Statuses()
	var outputs []string
	var buf bytes.Buffer
	dl := BuildDriftList(statuses, Filter{}, true)
	h := BuildDriftHistory(statuses, Filter{}, time.Time{}, 0)
	for _, doc := range []any{dl, h} {
		buf.Reset()
		if err := WriteJSON(&buf, doc); err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, buf.String())
	}
	buf.Reset()
	_ = PrintDriftList(&buf, dl, fleetviewtest.Now)
	outputs = append(outputs, buf.String())
	buf.Reset()
	_ = PrintDriftHistory(&buf, h)
	outputs = append(outputs, buf.String())
	for i, out := range outputs {
		for _, secret := range []string{fleetviewtest.SecretOld, fleetviewtest.SecretNew, fleetviewtest.SecretToken} {
			if strings.Contains(out, secret) {
				t.Errorf("output %d shows the Secret value %q:\n%s", i, secret, out)
			}
		}
		if !strings.Contains(out, redactedValue) {
			t.Errorf("output %d does not say (redacted):\n%s", i, out)
		}
		if i != 3 && !strings.Contains(out, "gold") { // the history table shows only the first field
			t.Errorf("output %d hides a Secret's label, which is no secret:\n%s", i, out)
		}
	}
	// The fixtures are not changed by rendering.
	if statuses[2].Status.Drifts[0].Fields[0].Old != `"`+fleetviewtest.SecretOld+`"` {
		t.Errorf("rendering changed the input")
	}
}

// The JSON documents are the CLI's contract: envelope, camelCase keys, [] for no items.
func TestJSONDocuments(t *testing.T) {
	statuses := fleetviewtest.Statuses()
	cases := []struct {
		name, kind string
		doc        any
		keys       []string
	}{
		{"status", kindFleetStatus, BuildFleetStatus(statuses, Filter{}),
			[]string{"clusterNamespace", "cluster", "serviceSet", "service", "ready", "reason", "health", "syncMode", "paused", "objects", "driftedObjects", "lastDriftTime",
				"statusName", "revision", "lastAppliedTime", "lastFullReconcileTime", "observedServiceSetGeneration"}},
		{"drift", kindDriftList, BuildDriftList(statuses, Filter{}, true),
			[]string{"clusterNamespace", "object", "state", "drift"}},
		{"history", kindDriftHistory, BuildDriftHistory(statuses, Filter{}, time.Time{}, 0),
			[]string{"clusterNamespace", "serviceSet", "object", "drift"}},
		{"empty status", kindFleetStatus, BuildFleetStatus(nil, Filter{}), nil},
		{"empty drift", kindDriftList, BuildDriftList(nil, Filter{}, true), nil},
		{"empty history", kindDriftHistory, BuildDriftHistory(nil, Filter{}, time.Time{}, 0), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteJSON(&buf, c.doc); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				APIVersion string           `json:"apiVersion"`
				Kind       string           `json:"kind"`
				Items      []map[string]any `json:"items"`
			}
			raw := map[string]json.RawMessage{}
			if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
				t.Fatal(err)
			}
			if string(raw["items"]) == "null" {
				t.Fatalf("items is null, want []")
			}
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.APIVersion != cliAPIVersion || doc.Kind != c.kind {
				t.Fatalf("envelope = %s %s, want %s %s", doc.APIVersion, doc.Kind, cliAPIVersion, c.kind)
			}
			if len(c.keys) == 0 {
				return
			}
			for _, k := range c.keys {
				if _, ok := doc.Items[0][k]; !ok {
					t.Errorf("first item lacks key %q: %v", k, doc.Items[0])
				}
			}
		})
	}

	var buf bytes.Buffer
	_ = WriteJSON(&buf, BuildDriftList(statuses, Filter{Service: "web"}, false))
	var dl DriftList
	if err := json.Unmarshal(buf.Bytes(), &dl); err != nil {
		t.Fatal(err)
	}
	d := dl.Items[0].Drift
	if d.DetectedTime.IsZero() || d.Type != "Changed" || d.Fields[0].Path != ".spec.replicas" || d.Fields[0].New != "5" {
		t.Errorf("drift round trip = %+v", d)
	}
	for _, k := range []string{`"detectedTime"`, `"detection"`, `"manager"`, `"subresource"`, `"fields"`, `"path"`, `"old"`, `"new"`} {
		if !strings.Contains(buf.String(), k) {
			t.Errorf("drift JSON lacks %s:\n%s", k, buf.String())
		}
	}
}

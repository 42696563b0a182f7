package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Secret values the fixtures put into drift records unredacted, as a buggy or older controller
// might: no CLI output may contain them.
const (
	secretOld = "c2VjcmV0LW9sZA=="
	secretNew = "aHVudGVyMg=="
	secretTok = "plain-token-value"
)

var fixtureNow = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func micro(ago time.Duration) metav1.MicroTime { return metav1.NewMicroTime(fixtureNow.Add(-ago)) }

func microPtr(ago time.Duration) *metav1.MicroTime {
	t := micro(ago)
	return &t
}

// cond is a condition as the API server accepts it.
func cond(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(fixtureNow.Add(-time.Hour))}
}

func ref(group, kind, ns, name string) holdfastv1.ResourceRef {
	return holdfastv1.ResourceRef{Group: group, Version: "v1", Kind: kind, Namespace: ns, Name: name}
}

var (
	deployRef = ref("apps", "Deployment", "shop", "web")
	cmRef     = ref("", "ConfigMap", "shop", "web-settings")
	secretRef = ref("", "Secret", "shop", "creds")
	svcRef    = ref("", "Service", "shop", "cache")
)

// fixtureStatuses is a small fleet, deliberately out of order:
//   - fleet/c2 apps: web in sync, service set paused;
//   - fleet/c1 apps: web with a scaled Deployment (Drifted) and a Contested Secret, cache with a
//     deleted Service (Missing), and drift records, some corrected;
//   - other/c1 infra: no services yet, its Cluster not ready.
func fixtureStatuses() []holdfastv1.ClusterServiceStatus {
	scale := holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Fields: []holdfastv1.FieldChange{{Path: ".spec.replicas", Old: "2", New: "5"}},
		Manager: "kubectl-scale", Operation: "Update", Subresource: "scale", DetectedTime: micro(3 * time.Minute)}
	secretEdit := holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Fields: []holdfastv1.FieldChange{
		{Path: ".data.password", Old: `"` + secretOld + `"`, New: `"` + secretNew + `"`},
		{Path: ".metadata.labels.tier", Old: `"gold"`, New: `"silver"`},
	}, Manager: "rotator", Operation: "Apply", DetectedTime: micro(time.Minute)}
	deleted := holdfastv1.DriftDetail{Type: holdfastv1.DriftDeleted, DetectedTime: micro(2 * time.Minute), Detection: holdfastv1.DriftDetectedByComparison}
	cmEdit := holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Fields: []holdfastv1.FieldChange{{Path: ".data.logLevel", Old: `"info"`, New: `"trace"`}},
		Manager: "kubectl-edit", Operation: "Update", DetectedTime: micro(10 * time.Minute)}
	tokenEdit := holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Fields: []holdfastv1.FieldChange{{Path: ".stringData.token", New: `"` + secretTok + `"`}},
		Manager: "kubectl-edit", Operation: "Update", DetectedTime: micro(20 * time.Minute)}

	c1 := holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "apps.c1"},
		Spec:       holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "apps", Cluster: "c1"},
		Status: holdfastv1.ClusterServiceStatusStatus{
			SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
			Conditions: []metav1.Condition{
				cond(holdfastv1.ReadyCondition, metav1.ConditionFalse, holdfastv1.ApplyFailedReason, ""),
				cond(holdfastv1.PausedCondition, metav1.ConditionFalse, holdfastv1.NotPausedReason, ""),
			},
			Services: []holdfastv1.ServiceStatus{
				{Name: "web", Ready: metav1.ConditionTrue, Reason: "Ready", Objects: 3},
				{Name: "cache", Ready: metav1.ConditionFalse, Reason: "Drifted", Message: "Service shop/cache was deleted", Objects: 1},
			},
			Resources: []holdfastv1.ResourceStatus{
				{ResourceRef: secretRef, Service: "web", State: holdfastv1.ResourceContested, Message: "rotator keeps reverting it", LastDrift: &secretEdit},
				{ResourceRef: deployRef, Service: "web", State: holdfastv1.ResourceDrifted, LastDrift: &scale},
				{ResourceRef: cmRef, Service: "web", State: holdfastv1.ResourceInSync},
				{ResourceRef: svcRef, Service: "cache", State: holdfastv1.ResourceMissing, LastDrift: &deleted},
			},
			Drifts: []holdfastv1.DriftRecord{
				{ResourceRef: secretRef, Service: "web", DriftDetail: secretEdit},
				{ResourceRef: svcRef, Service: "cache", DriftDetail: deleted},
				{ResourceRef: deployRef, Service: "web", DriftDetail: scale},
				{ResourceRef: cmRef, Service: "web", DriftDetail: cmEdit, CorrectedTime: microPtr(10*time.Minute - 350*time.Millisecond)},
				{ResourceRef: secretRef, Service: "web", DriftDetail: tokenEdit, CorrectedTime: microPtr(20*time.Minute - 2*time.Second)},
			},
			DriftCount:   5,
			DriftedCount: 3,
		},
	}
	c2 := holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "apps.c2"},
		Spec:       holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "apps", Cluster: "c2"},
		Status: holdfastv1.ClusterServiceStatusStatus{
			SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
			Conditions: []metav1.Condition{
				cond(holdfastv1.ReadyCondition, metav1.ConditionFalse, holdfastv1.PausedReason, ""),
				cond(holdfastv1.PausedCondition, metav1.ConditionTrue, holdfastv1.PausedReason, ""),
			},
			Services:  []holdfastv1.ServiceStatus{{Name: "web", Ready: metav1.ConditionTrue, Reason: "Ready", Objects: 3}},
			Resources: []holdfastv1.ResourceStatus{{ResourceRef: deployRef, Service: "web", State: holdfastv1.ResourceInSync}},
		},
	}
	infra := holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "infra.c1"},
		Spec:       holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "infra", Cluster: "c1"},
		Status: holdfastv1.ClusterServiceStatusStatus{Conditions: []metav1.Condition{
			cond(holdfastv1.ReadyCondition, metav1.ConditionFalse, holdfastv1.ClusterNotReadyReason, "Cluster other/c1 is not Connected"),
		}},
	}
	return []holdfastv1.ClusterServiceStatus{infra, c2, c1}
}

func rowKeys(items []ServiceState) []string {
	var out []string
	for _, r := range items {
		out = append(out, r.ClusterNamespace+"/"+r.Cluster+" "+r.ServiceSet+" "+r.Service)
	}
	return out
}

func TestBuildFleetStatus(t *testing.T) {
	fs := buildFleetStatus(fixtureStatuses(), fleetFilter{})
	want := []string{"fleet/c1 apps web", "fleet/c1 apps cache", "fleet/c2 apps web", "other/c1 infra "}
	if got := rowKeys(fs.Items); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("rows = %q, want %q (by cluster, service set, then declaration order)", got, want)
	}
	web, cache, paused, empty := fs.Items[0], fs.Items[1], fs.Items[2], fs.Items[3]
	if web.DriftedObjects != 2 || web.Objects != 3 || web.Ready != "True" || web.SyncMode != "ContinuousWithDriftDetection" {
		t.Errorf("web on c1 = %+v, want 2 of 3 objects drifted (Drifted and Contested), Ready True", web)
	}
	if web.LastDriftTime == nil || !web.LastDriftTime.Equal(fixtureNow.Add(-time.Minute)) {
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
	wantSummary := FleetSummary{Clusters: 3, ServiceSets: 2, Services: 4, Ready: 2, NotReady: 2, DriftedObjects: 3, ClustersWithDrift: 1}
	if fs.Summary != wantSummary {
		t.Errorf("summary = %+v, want %+v", fs.Summary, wantSummary)
	}
}

func TestFleetFilters(t *testing.T) {
	cases := []struct {
		name   string
		filter fleetFilter
		want   []string
	}{
		{"cluster name in any namespace", fleetFilter{cluster: "c1"}, []string{"fleet/c1 apps web", "fleet/c1 apps cache", "other/c1 infra "}},
		{"cluster in a namespace", fleetFilter{clusterNamespace: "fleet", cluster: "c1"}, []string{"fleet/c1 apps web", "fleet/c1 apps cache"}},
		{"namespace", fleetFilter{clusterNamespace: "fleet"}, []string{"fleet/c1 apps web", "fleet/c1 apps cache", "fleet/c2 apps web"}},
		{"service set", fleetFilter{serviceSet: "infra"}, []string{"other/c1 infra "}},
		{"service", fleetFilter{service: "web"}, []string{"fleet/c1 apps web", "fleet/c2 apps web"}},
		{"nothing matches", fleetFilter{cluster: "c9"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := rowKeys(buildFleetStatus(fixtureStatuses(), c.filter).Items); strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("rows = %q, want %q", got, c.want)
			}
		})
	}
}

func TestPrintFleetStatus(t *testing.T) {
	var buf bytes.Buffer
	if err := printFleetStatus(&buf, buildFleetStatus(fixtureStatuses(), fleetFilter{}), fixtureNow); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, want := range []string{"CLUSTER", "SERVICE SET", "DRIFTED", "LAST DRIFT"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("header %q lacks %q", lines[0], want)
		}
	}
	checks := []struct {
		line int
		want []string
	}{
		{1, []string{"fleet/c1", "apps", "web", "True", "ContinuousWithDriftDetection", " 3 ", " 2 ", "60s ago"}},
		{2, []string{"fleet/c1", "cache", "False", "Drifted", "2m ago", "Service shop/cache was deleted"}},
		{3, []string{"fleet/c2", "(paused)"}},
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
	if err := printFleetStatus(&buf, buildFleetStatus(nil, fleetFilter{}), fixtureNow); err != nil || !strings.Contains(buf.String(), "No service set") {
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
		filter fleetFilter
		all    bool
		want   []string
	}{
		{"current drift, by service then object", fleetFilter{}, false,
			[]string{"c1 cache Service Missing", "c1 web Deployment Drifted", "c1 web Secret Contested"}},
		{"with corrected records, newest first", fleetFilter{}, true,
			[]string{"c1 cache Service Missing", "c1 web Deployment Drifted", "c1 web Secret Contested", "c1 web ConfigMap Corrected", "c1 web Secret Corrected"}},
		{"one service", fleetFilter{service: "cache"}, true, []string{"c1 cache Service Missing"}},
		{"a cluster without drift", fleetFilter{cluster: "c2"}, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := driftKeys(buildDriftList(fixtureStatuses(), c.filter, c.all).Items); strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("items = %q, want %q", got, c.want)
			}
		})
	}

	dl := buildDriftList(fixtureStatuses(), fleetFilter{}, true)
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
	if err := printDriftList(&buf, buildDriftList(fixtureStatuses(), fleetFilter{}, true), fixtureNow); err != nil {
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
	h := buildDriftHistory(fixtureStatuses(), fleetFilter{}, time.Time{}, 0)
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

	recent := buildDriftHistory(fixtureStatuses(), fleetFilter{}, fixtureNow.Add(-5*time.Minute), 2)
	if len(recent.Items) != 2 || recent.Total != 3 || recent.Items[0].Object.Kind != "Secret" || recent.Items[1].Object.Kind != "Service" {
		t.Errorf("--since 5m --limit 2 = %+v, want the 2 newest of 3", recent)
	}
	if h := buildDriftHistory(fixtureStatuses(), fleetFilter{serviceSet: "apps", service: "cache"}, time.Time{}, 0); h.Total != 1 {
		t.Errorf("--service cache: %d records, want 1", h.Total)
	}

	var buf bytes.Buffer
	if err := printDriftHistory(&buf, recent); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"DETECTED", "LATENCY", "2026-07-01T11:59:00Z", "(+1 more)", "(comparison)", "2 drift records of 3 (--limit 0 shows all)"} {
		if !strings.Contains(out, want) {
			t.Errorf("history table lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := printDriftHistory(&buf, h); err != nil {
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
		{secretRef, ".data.password", true},
		{secretRef, ".data", true},
		{secretRef, ".stringData.token", true},
		{secretRef, "/data/password", true},
		{secretRef, `.data[key="x"]`, true},
		{secretRef, "", true},
		{secretRef, ".metadata.labels.tier", false},
		{secretRef, ".database", false},
		{secretRef, ".type", false},
		{cmRef, ".data.password", false},
		{ref("example.com", "Secret", "shop", "x"), ".data.password", false},
	}
	for _, c := range cases {
		if got := secretData(c.ref, c.path); got != c.want {
			t.Errorf("secretData(%s %s, %q) = %v, want %v", c.ref.Group, c.ref.Kind, c.path, got, c.want)
		}
	}

	// Every output of every verb that shows values.
	statuses := fixtureStatuses()
	var outputs []string
	var buf bytes.Buffer
	dl := buildDriftList(statuses, fleetFilter{}, true)
	h := buildDriftHistory(statuses, fleetFilter{}, time.Time{}, 0)
	for _, doc := range []any{dl, h} {
		buf.Reset()
		if err := writeJSON(&buf, doc); err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, buf.String())
	}
	buf.Reset()
	_ = printDriftList(&buf, dl, fixtureNow)
	outputs = append(outputs, buf.String())
	buf.Reset()
	_ = printDriftHistory(&buf, h)
	outputs = append(outputs, buf.String())
	for i, out := range outputs {
		for _, secret := range []string{secretOld, secretNew, secretTok} {
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
	if statuses[2].Status.Drifts[0].Fields[0].Old != `"`+secretOld+`"` {
		t.Errorf("rendering changed the input")
	}
}

// The JSON documents are the CLI's contract: envelope, camelCase keys, [] for no items.
func TestJSONDocuments(t *testing.T) {
	statuses := fixtureStatuses()
	cases := []struct {
		name, kind string
		doc        any
		keys       []string
	}{
		{"status", kindFleetStatus, buildFleetStatus(statuses, fleetFilter{}),
			[]string{"clusterNamespace", "cluster", "serviceSet", "service", "ready", "reason", "syncMode", "paused", "objects", "driftedObjects", "lastDriftTime"}},
		{"drift", kindDriftList, buildDriftList(statuses, fleetFilter{}, true),
			[]string{"clusterNamespace", "object", "state", "drift"}},
		{"history", kindDriftHistory, buildDriftHistory(statuses, fleetFilter{}, time.Time{}, 0),
			[]string{"clusterNamespace", "serviceSet", "object", "drift"}},
		{"empty status", kindFleetStatus, buildFleetStatus(nil, fleetFilter{}), nil},
		{"empty drift", kindDriftList, buildDriftList(nil, fleetFilter{}, true), nil},
		{"empty history", kindDriftHistory, buildDriftHistory(nil, fleetFilter{}, time.Time{}, 0), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := writeJSON(&buf, c.doc); err != nil {
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
	_ = writeJSON(&buf, buildDriftList(statuses, fleetFilter{service: "web"}, false))
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

func TestClusterFlags(t *testing.T) {
	cases := []struct {
		cluster, namespace, wantNS, wantName string
		err                                  bool
	}{
		{"", "", "", "", false},
		{"c1", "", "", "c1", false},
		{"c1", "fleet", "fleet", "c1", false},
		{"fleet/c1", "", "fleet", "c1", false},
		{"fleet/c1", "fleet", "fleet", "c1", false},
		{"fleet/c1", "other", "", "", true},
		{"/c1", "", "", "", true},
		{"a/b/c", "", "", "", true},
		{"", "fleet", "fleet", "", false},
	}
	for _, c := range cases {
		ns, name, err := (&clusterFlags{cluster: c.cluster, namespace: c.namespace}).resolve()
		if (err != nil) != c.err || ns != c.wantNS || name != c.wantName {
			t.Errorf("resolve(--cluster %q -n %q) = %q, %q, %v; want %q, %q, error %v", c.cluster, c.namespace, ns, name, err, c.wantNS, c.wantName, c.err)
		}
	}
}

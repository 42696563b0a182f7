package notify

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestEventJSON(t *testing.T) {
	e := deploymentDrift()
	corrected := detected.Add(250 * time.Millisecond)
	e.CorrectedTime = &corrected
	e.Message = "corrected <at once>"

	got, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{
		"version": "holdfast.dev/v1alpha1",
		"id": %q,
		"type": "DriftDetected",
		"time": "2025-03-01T10:00:00.124456Z",
		"multiClusterService": "web",
		"cluster": {"namespace": "fleet", "name": "eu-1"},
		"service": "frontend",
		"object": {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "web", "name": "frontend"},
		"drift": {
			"type": "Changed",
			"fields": [{"path": ".spec.replicas", "old": "3", "new": "5"}],
			"manager": "kubectl-edit",
			"operation": "Update",
			"detectedTime": "2025-03-01T10:00:00.123456Z",
			"detection": "Watch"
		},
		"correctedTime": "2025-03-01T10:00:00.373456Z",
		"message": "corrected <at once>",
		"severity": "warning"
	}`, e.ID())
	var gotV, wantV any
	if err := json.Unmarshal(got, &gotV); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &wantV); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotV, wantV) {
		t.Fatalf("event JSON:\n%s\nwant the shape:\n%s", got, want)
	}
}

func TestEventJSONOmitsWhatIsUnknown(t *testing.T) {
	e := deploymentDrift()
	e.Drift = nil
	e.Service = ""
	got, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"drift", "service", "correctedTime", "message"} {
		if _, ok := m[k]; ok {
			t.Errorf("%q present in %s, want it omitted when unset", k, got)
		}
	}
	if m["version"] != PayloadVersion {
		t.Errorf("version = %v, want %s", m["version"], PayloadVersion)
	}
}

func TestEventID(t *testing.T) {
	e := deploymentDrift()
	if e.ID() != deploymentDrift().ID() {
		t.Fatalf("the same event got two IDs")
	}
	later := deploymentDrift()
	later.Drift.DetectedTime = metav1.NewMicroTime(detected.Add(time.Microsecond))
	other := deploymentDrift()
	other.Type = DriftCorrected
	for name, o := range map[string]Event{"later drift": later, "other type": other} {
		if o.ID() == e.ID() {
			t.Errorf("%s has the same ID", name)
		}
	}
}

// TestRolloutHaltedEvent: a RolloutHalted event carries its rollout (revision, stable revision,
// wave, failed clusters) in the payload and says which clusters failed in a Slack text; two
// halts of different revisions are different events.
func TestRolloutHaltedEvent(t *testing.T) {
	e := Event{Type: RolloutHalted, Time: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC), MultiClusterService: "platform",
		Rollout: &RolloutDetail{Revision: "platform-3f9c0a1b2c", StableRevision: "platform-0a1b2c3d4e", Wave: "canary",
			Failed: []holdfastv1.RolloutFailure{{Cluster: "fleet/canary-1", Reason: "Unhealthy", Message: "Deployment web: crash loop"}}}}
	body, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Type    string `json:"type"`
		Rollout struct {
			Revision, StableRevision, Wave string
			FailedClusters                 []struct{ Cluster, Reason, Message string }
		} `json:"rollout"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Type != "RolloutHalted" || got.Rollout.Revision != "platform-3f9c0a1b2c" || got.Rollout.StableRevision != "platform-0a1b2c3d4e" ||
		got.Rollout.Wave != "canary" || len(got.Rollout.FailedClusters) != 1 || got.Rollout.FailedClusters[0].Cluster != "fleet/canary-1" {
		t.Errorf("payload %s", body)
	}
	text := slackText(e)
	for _, w := range []string{"Rollout halted", "platform-3f9c0a1b2c", "fleet/canary-1: Unhealthy: Deployment web: crash loop", "holdfast rollout resume platform"} {
		if !strings.Contains(text, w) {
			t.Errorf("Slack text lacks %q:\n%s", w, text)
		}
	}
	other := e
	other.Rollout = &RolloutDetail{Revision: "platform-ffffffffff"}
	if e.ID() == other.ID() {
		t.Error("halts of two revisions have one ID")
	}
}

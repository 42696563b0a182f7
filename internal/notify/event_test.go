package notify

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		"message": "corrected <at once>"
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

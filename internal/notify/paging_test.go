package notify

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// correction is the DriftCorrected event that ends deploymentDrift's problem.
func correction() Event {
	e := deploymentDrift()
	e.Type = DriftCorrected
	e.Time = e.Time.Add(time.Second)
	corrected := e.Time
	e.CorrectedTime = &corrected
	return e
}

func TestProblemKey(t *testing.T) {
	other := deploymentDrift()
	other.Object.Name = "backend"
	rollout := Event{Type: RolloutHalted, MultiClusterService: "web", Rollout: &RolloutDetail{Revision: "r1"}}
	complete := Event{Type: RolloutComplete, MultiClusterService: "web", Rollout: &RolloutDetail{Revision: "r2"}}
	switch {
	case problemKey(deploymentDrift()) != problemKey(correction()):
		t.Error("a drift and its correction have different keys")
	case problemKey(deploymentDrift()) == problemKey(other):
		t.Error("drifts of two objects share a key")
	case problemKey(rollout) != problemKey(complete):
		t.Error("a halted rollout and its completion have different keys")
	case problemKey(rollout) == problemKey(deploymentDrift()):
		t.Error("a rollout and a drift share a key")
	}
	if !resolves(correction()) || resolves(deploymentDrift()) || !resolves(complete) {
		t.Error("resolves: want DriftCorrected and RolloutComplete only")
	}
}

func TestPagerDutyDelivery(t *testing.T) {
	srv, got := receiver(t, http.StatusAccepted)
	tgt := resolve(t, holdfastv1.NotificationPagerDuty, map[string]string{"url": srv.URL + "/v2/enqueue", "routingKey": "R0UT1NGKEY"})
	type pdEvent struct {
		RoutingKey  string `json:"routing_key"`
		EventAction string `json:"event_action"`
		DedupKey    string `json:"dedup_key"`
		Client      string
		Payload     *struct {
			Summary, Source, Severity, Component, Group, Class string
			Timestamp                                          time.Time
			CustomDetails                                      map[string]any `json:"custom_details"`
		}
	}
	var trigger, resolved pdEvent
	deliverTo(t, tgt, deploymentDrift(), got).decode(t, "/v2/enqueue", &trigger)
	if trigger.RoutingKey != "R0UT1NGKEY" || trigger.EventAction != "trigger" || trigger.DedupKey == "" || trigger.Payload == nil {
		t.Fatalf("trigger = %+v", trigger)
	}
	p := trigger.Payload
	if p.Severity != "warning" || p.Source != "cluster fleet/eu-1" || p.Summary != "Drift detected: Deployment web/frontend on cluster fleet/eu-1" ||
		p.Class != "DriftDetected" || p.Group != "web" || p.Component != "Deployment web/frontend" || !p.Timestamp.Equal(deploymentDrift().Time) ||
		p.CustomDetails["id"] != deploymentDrift().ID() {
		t.Errorf("payload = %+v", p)
	}
	deliverTo(t, tgt, correction(), got).decode(t, "/v2/enqueue", &resolved)
	if resolved.EventAction != "resolve" || resolved.DedupKey != trigger.DedupKey || resolved.RoutingKey != "R0UT1NGKEY" || resolved.Payload != nil {
		t.Errorf("resolve = %+v, want a resolve of dedup key %s", resolved, trigger.DedupKey)
	}
}

func TestOpsgenieDelivery(t *testing.T) {
	srv, got := receiver(t, http.StatusAccepted)
	tgt := resolve(t, holdfastv1.NotificationOpsgenie, map[string]string{"url": srv.URL, "apiKey": "0psg3n1e-key"})
	var alert struct {
		Message, Alias, Description, Entity, Source, Priority string
		Tags                                                  []string
		Details                                               map[string]string
	}
	e := deploymentDrift()
	e.Type = CorrectionFailed
	req := deliverTo(t, tgt, e, got)
	req.decode(t, "/v2/alerts", &alert)
	if a := req.header.Get("Authorization"); a != "GenieKey 0psg3n1e-key" {
		t.Errorf("Authorization = %q, want the GenieKey", a)
	}
	if alert.Priority != "P2" || alert.Alias != problemKey(e) || alert.Source != "Holdfast" || alert.Entity != "Deployment web/frontend" ||
		alert.Message != "Drift correction failed: Deployment web/frontend on cluster fleet/eu-1" || !strings.Contains(alert.Description, ".spec.replicas: 3 → 5") ||
		alert.Details["cluster"] != "fleet/eu-1" || alert.Details["serviceSet"] != "web" || !strings.Contains(strings.Join(alert.Tags, ","), "CorrectionFailed") {
		t.Errorf("alert = %+v", alert)
	}
	var closed struct{ Source, Note string }
	req = deliverTo(t, tgt, correction(), got)
	req.decode(t, "/v2/alerts/"+alert.Alias+"/close?identifierType=alias", &closed)
	if req.header.Get("Authorization") != "GenieKey 0psg3n1e-key" || closed.Source != "Holdfast" || !strings.HasPrefix(closed.Note, "Drift corrected") {
		t.Errorf("close = %+v", closed)
	}
}

func TestAlertmanagerDelivery(t *testing.T) {
	type amAlert struct {
		Labels      map[string]string
		Annotations map[string]string
		StartsAt    time.Time
		EndsAt      *time.Time
	}
	cases := []struct {
		name string
		data map[string]string
		auth string
	}{
		{"without credentials", map[string]string{}, ""},
		{"bearer token", map[string]string{"token": "b3arer"}, "Bearer b3arer"},
		{"basic auth", map[string]string{"username": "holdfast", "password": "s3cret"}, "Basic aG9sZGZhc3Q6czNjcmV0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, got := receiver(t, http.StatusOK)
			c.data["url"] = srv.URL + "/alertmanager"
			tgt := resolve(t, holdfastv1.NotificationAlertmanager, c.data)
			var firing []amAlert
			req := deliverTo(t, tgt, deploymentDrift(), got)
			req.decode(t, "/alertmanager/api/v2/alerts", &firing)
			if a := req.header.Get("Authorization"); a != c.auth {
				t.Errorf("Authorization = %q, want %q", a, c.auth)
			}
			want := map[string]string{"alertname": "HoldfastDriftDetected", "severity": "warning", "serviceset": "web", "cluster": "fleet/eu-1",
				"service": "frontend", "group": "apps", "kind": "Deployment", "namespace": "web", "name": "frontend"}
			if len(firing) != 1 || !sameLabels(firing[0].Labels, want) || firing[0].EndsAt != nil || !firing[0].StartsAt.Equal(deploymentDrift().Time) ||
				firing[0].Annotations["summary"] != headline(deploymentDrift()) || !strings.Contains(firing[0].Annotations["description"], "3 → 5") {
				t.Fatalf("alerts = %+v, want one firing alert labelled %v", firing, want)
			}
			var resolved []amAlert
			deliverTo(t, tgt, correction(), got).decode(t, "/alertmanager/api/v2/alerts", &resolved)
			found := false
			for _, a := range resolved {
				if a.EndsAt == nil || !a.EndsAt.Equal(correction().Time) {
					t.Errorf("alert %v is not resolved at the correction's time", a.Labels)
				}
				found = found || sameLabels(a.Labels, want)
			}
			if !found {
				t.Errorf("resolved alerts %+v do not include the firing one's labels", resolved)
			}
		})
	}
}

func sameLabels(a, b map[string]string) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestGrafanaDelivery(t *testing.T) {
	srv, got := receiver(t, http.StatusOK)
	tgt := resolve(t, holdfastv1.NotificationGrafana, map[string]string{"url": srv.URL + "/grafana/", "token": "glsa_t0ken"})
	var annotation struct {
		Time int64
		Tags []string
		Text string
	}
	req := deliverTo(t, tgt, deploymentDrift(), got)
	req.decode(t, "/grafana/api/annotations", &annotation)
	if a := req.header.Get("Authorization"); a != "Bearer glsa_t0ken" {
		t.Errorf("Authorization = %q, want the bearer token", a)
	}
	if annotation.Time != deploymentDrift().Time.UnixMilli() || !strings.HasPrefix(annotation.Text, "Drift detected on cluster fleet/eu-1") ||
		strings.Join(annotation.Tags, ",") != "holdfast,DriftDetected,serviceset:web,severity:warning,cluster:fleet/eu-1" {
		t.Errorf("annotation = %+v", annotation)
	}
}

// TestSummaryLine: an AlertRule's summary line follows the title in every summary.
func TestSummaryLine(t *testing.T) {
	e := deploymentDrift()
	e.Summary = "Production drift: page the platform team"
	lines := strings.Split(summary(e, plain), "\n")
	if len(lines) < 2 || lines[1] != e.Summary {
		t.Errorf("summary lines = %q, want the rule's summary second", lines)
	}
}

// TestSummaryLineOfARollout: the same for a halted rollout's text.
func TestSummaryLineOfARollout(t *testing.T) {
	e := Event{Type: RolloutHalted, MultiClusterService: "web", Rollout: &RolloutDetail{Revision: "r2", StableRevision: "r1", Wave: "canary"}, Summary: "Canary failed"}
	lines := strings.Split(summary(e, plain), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "Rollout halted service set web") || lines[1] != e.Summary {
		t.Errorf("summary lines = %q", lines)
	}
}

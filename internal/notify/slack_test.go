package notify

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestSlackText(t *testing.T) {
	corrected := detected.Add(1500 * time.Millisecond)
	cases := []struct {
		name  string
		event func(e *Event)
		want  []string // lines or parts of lines, in order
	}{
		{
			name:  "detected, not corrected",
			event: func(e *Event) {},
			want: []string{
				"*Drift detected* on cluster fleet/eu-1, service set web, service frontend",
				"Deployment web/frontend (apps/v1) was changed by kubectl-edit (Update)",
				"• .spec.replicas: 3 → 5",
				"Not corrected yet.",
			},
		},
		{
			name:  "attributed to a user",
			event: func(e *Event) { e.Drift.User = "alice" },
			want:  []string{"Deployment web/frontend (apps/v1) was changed by alice via kubectl-edit (Update)"},
		},
		{
			name: "corrected, with the latency",
			event: func(e *Event) {
				e.Type = DriftCorrected
				e.CorrectedTime = &corrected
			},
			want: []string{"*Drift corrected*", "Corrected at 2025-03-01 10:00:01.623 UTC, 1.5s after detection."},
		},
		{
			name: "deleted, author unknown, found by comparison",
			event: func(e *Event) {
				e.Drift = &holdfastv1.DriftDetail{Type: holdfastv1.DriftDeleted, Detection: holdfastv1.DriftDetectedByComparison}
			},
			want: []string{"Deployment web/frontend (apps/v1) was deleted; found by comparison"},
		},
		{
			name: "contested, with a message",
			event: func(e *Event) {
				e.Type = Contested
				e.Drift.Subresource = "scale"
				e.Message = "hpa-controller reverted 5 corrections in 2m"
			},
			want: []string{"*Drift contested*", "by kubectl-edit (Update, subresource scale)",
				"Holdfast corrects this object with a backoff", "hpa-controller reverted 5 corrections in 2m"},
		},
		{
			name: "many fields and long values are cut",
			event: func(e *Event) {
				e.Drift.Fields = nil
				for i := range 7 {
					e.Drift.Fields = append(e.Drift.Fields, holdfastv1.FieldChange{Path: fmt.Sprintf(".data.k%d", i), New: `"` + strings.Repeat("v", 100) + `"`})
				}
			},
			want: []string{"• .data.k0: (absent) → \"" + strings.Repeat("v", 79) + "…", "• .data.k4", "• and 2 more fields"},
		},
		{
			name:  "markup is escaped",
			event: func(e *Event) { e.Drift.Fields[0].New = `"<!channel> & co"` },
			want:  []string{`3 → "&lt;!channel&gt; &amp; co"`},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := deploymentDrift()
			c.event(&e)
			text := slackText(e)
			rest := text
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("Slack text lacks %q (in order):\n%s", w, text)
				}
				rest = rest[i+len(w):]
			}
			if n := strings.Count(text, "\n") + 1; n > 10 {
				t.Errorf("Slack text has %d lines, want a few:\n%s", n, text)
			}
		})
	}
}

func TestSlackBody(t *testing.T) {
	m, err := render(Target{Name: "chat", Type: holdfastv1.NotificationSlack, HMACKey: []byte("unused")}, deploymentDrift())
	if err != nil {
		t.Fatal(err)
	}
	body, h := m.body, m.headerAt(time.Now())
	var msg map[string]any
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatalf("Slack body is not JSON: %v", err)
	}
	if len(msg) != 1 || msg["text"] != slackText(deploymentDrift()) {
		t.Fatalf("Slack body = %s, want only the text", body)
	}
	if h.Get("Content-Type") != "application/json" || h.Get(HeaderSignature) != "" || h.Get(HeaderTimestamp) != "" {
		t.Fatalf("Slack headers = %v, want JSON and no signature", h)
	}
}

// The webhook payload carries the user attribution named.
func TestPayloadUser(t *testing.T) {
	e := deploymentDrift()
	e.Drift.User = "alice"
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Drift struct {
			User, Manager string
		}
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.Drift.User != "alice" || p.Drift.Manager != "kubectl-edit" {
		t.Errorf("payload drift = %+v, want user alice, manager kubectl-edit", p.Drift)
	}
}

package notify

import (
	"encoding/json"
	"time"
)

const (
	// pagerDutyURL is the Events API v2's address.
	pagerDutyURL = "https://events.pagerduty.com/v2/enqueue"
	// pagerDutyMaxSummary is PagerDuty's limit on an event's summary, in characters.
	pagerDutyMaxSummary = 1024
)

// pagerDutySeverity is PagerDuty's severity of each of Holdfast's.
var pagerDutySeverity = map[Severity]string{SeverityInfo: "info", SeverityWarning: "warning", SeverityError: "error"}

// pagerDutyConfigure reads the routing key of the PagerDuty service's Events API v2 integration.
func pagerDutyConfigure(t *Target, s secretKeys) (err error) {
	t.Token, err = s.requiredToken(SecretKeyRoutingKey)
	return err
}

// pagerDutyEvent is an Events API v2 event.
type pagerDutyEvent struct {
	RoutingKey  string            `json:"routing_key"`
	EventAction string            `json:"event_action"`
	DedupKey    string            `json:"dedup_key"`
	Client      string            `json:"client,omitempty"`
	Payload     *pagerDutyPayload `json:"payload,omitempty"`
}

type pagerDutyPayload struct {
	Summary   string    `json:"summary"`
	Source    string    `json:"source"`
	Severity  string    `json:"severity"`
	Timestamp time.Time `json:"timestamp"`
	Component string    `json:"component,omitempty"`
	Group     string    `json:"group,omitempty"`
	Class     string    `json:"class"`
	// CustomDetails is Holdfast's JSON event.
	CustomDetails json.RawMessage `json:"custom_details"`
}

// pagerDutyMessage triggers an alert on the incident of e's problem, or resolves it when e ends
// the problem. The routing key goes in the body, as the Events API wants it.
func pagerDutyMessage(t Target, e Event) (message, error) {
	ev := pagerDutyEvent{RoutingKey: t.Token, EventAction: "trigger", DedupKey: problemKey(e), Client: "Holdfast"}
	if resolves(e) {
		ev.EventAction = "resolve"
		return jsonMessage(ev)
	}
	details, err := e.MarshalJSON()
	if err != nil {
		return message{}, err
	}
	ev.Payload = &pagerDutyPayload{
		Summary:       truncate(headline(e), pagerDutyMaxSummary, charactersOf),
		Source:        problemSource(e),
		Severity:      pagerDutySeverity[e.Severity()],
		Timestamp:     e.Time.UTC(),
		Group:         e.MultiClusterService,
		Class:         string(e.Type),
		CustomDetails: details,
	}
	if e.Object.Kind != "" {
		ev.Payload.Component = objectName(e.Object)
	}
	return jsonMessage(ev)
}

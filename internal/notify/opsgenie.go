package notify

import "net/http"

// Opsgenie's Alert API v2.
const (
	// opsgenieURL is the API's address in Opsgenie's US region; the EU region's is
	// https://api.eu.opsgenie.com.
	opsgenieURL = "https://api.opsgenie.com"
	// Opsgenie's limits, in characters.
	opsgenieMaxMessage     = 130
	opsgenieMaxDescription = 15000
	opsgenieMaxNote        = 25000
)

// opsgeniePriority is Opsgenie's priority of each of Holdfast's severities: P1 is left to
// people, for what is worse than anything Holdfast can tell.
var opsgeniePriority = map[Severity]string{SeverityInfo: "P5", SeverityWarning: "P3", SeverityError: "P2"}

// opsgenieConfigure reads the key of the Opsgenie API integration.
func opsgenieConfigure(t *Target, s secretKeys) (err error) {
	t.Token, err = s.requiredToken(SecretKeyAPIKey)
	return err
}

// opsgenieMessage creates an alert whose alias is e's problem, which Opsgenie folds into the
// open alert of that alias, or closes the alert of that alias when e ends the problem.
func opsgenieMessage(t Target, e Event) (message, error) {
	alias := problemKey(e)
	text := summary(e, plain)
	var (
		m   message
		err error
	)
	if resolves(e) {
		m, err = jsonMessage(struct {
			Source string `json:"source"`
			Note   string `json:"note"`
		}{"Holdfast", truncate(text, opsgenieMaxNote, charactersOf)})
		if err == nil {
			m.url, err = apiURL(t.URL, "v2", "alerts", alias, "close")
			m.url = withQuery(m.url, "identifierType", "alias")
		}
	} else {
		details := map[string]string{"type": string(e.Type), "serviceSet": e.MultiClusterService}
		if e.Cluster.Name != "" {
			details["cluster"] = e.Cluster.String()
		}
		if e.Service != "" {
			details["service"] = e.Service
		}
		var entity string
		if e.Object.Kind != "" {
			entity = objectName(e.Object)
			details["object"] = entity
		}
		m, err = jsonMessage(struct {
			Message     string            `json:"message"`
			Alias       string            `json:"alias"`
			Description string            `json:"description"`
			Tags        []string          `json:"tags"`
			Details     map[string]string `json:"details"`
			Entity      string            `json:"entity,omitempty"`
			Source      string            `json:"source"`
			Priority    string            `json:"priority"`
		}{
			Message:     truncate(headline(e), opsgenieMaxMessage, charactersOf),
			Alias:       alias,
			Description: truncate(text, opsgenieMaxDescription, charactersOf),
			Tags:        []string{"holdfast", string(e.Type), string(e.Severity())},
			Details:     details,
			Entity:      entity,
			Source:      "Holdfast",
			Priority:    opsgeniePriority[e.Severity()],
		})
		if err == nil {
			m.url, err = apiURL(t.URL, "v2", "alerts")
		}
	}
	if err != nil {
		return message{}, err
	}
	m.header = http.Header{"Authorization": {"GenieKey " + t.Token}}
	return m, nil
}

package notify

import (
	"net/http"
	"time"
)

// alertmanagerConfigure reads the optional credentials: a bearer token, or a username and a
// password for basic auth.
func alertmanagerConfigure(t *Target, s secretKeys) (err error) {
	if t.Token, err = s.token(SecretKeyToken); err != nil {
		return err
	}
	if t.Username, err = s.token(SecretKeyUsername); err != nil {
		return err
	}
	password, hasPassword := s.value(SecretKeyPassword)
	t.Password = password
	switch {
	case t.Token != "" && t.Username != "":
		return s.invalid(SecretKeyToken, "and key %q are both set; use a bearer token or basic auth, not both", SecretKeyUsername)
	case t.Username != "" && t.Password == "":
		return s.missing(SecretKeyPassword)
	case t.Username == "" && hasPassword:
		return s.missing(SecretKeyUsername)
	}
	return nil
}

// alertmanagerAlert is an alert of Alertmanager's API v2 (POST /api/v2/alerts).
type alertmanagerAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations,omitempty"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      *time.Time        `json:"endsAt,omitempty"`
}

// alertmanagerMessage posts e as a firing alert, or, for an event that ends a problem, posts as
// resolved the alerts of every event type that opens it. Alertmanager knows an alert by its
// labels: alertname says the type, the others where (see alertmanagerLabels).
//
// Holdfast sends each alert once; Alertmanager resolves a firing alert that is not sent again
// within its resolve_timeout (5 minutes by default), as docs/notifications.md says.
func alertmanagerMessage(t Target, e Event) (message, error) {
	var alerts []alertmanagerAlert
	if opened, ok := resolvedBy[e.Type]; ok {
		end := e.Time.UTC()
		for _, typ := range opened {
			alerts = append(alerts, alertmanagerAlert{Labels: alertmanagerLabels(e, typ), StartsAt: end, EndsAt: &end})
		}
	} else {
		alerts = append(alerts, alertmanagerAlert{
			Labels:      alertmanagerLabels(e, e.Type),
			Annotations: map[string]string{"summary": headline(e), "description": summary(e, plain)},
			StartsAt:    e.Time.UTC(),
		})
	}
	m, err := jsonMessage(alerts)
	if err != nil {
		return message{}, err
	}
	if m.url, err = apiURL(t.URL, "api", "v2", "alerts"); err != nil {
		return message{}, err
	}
	m.header = http.Header{}
	switch {
	case t.Token != "":
		m.header.Set("Authorization", "Bearer "+t.Token)
	case t.Username != "":
		r := http.Request{Header: m.header}
		r.SetBasicAuth(t.Username, t.Password)
	}
	return m, nil
}

// alertmanagerLabels are the labels of the alert of type typ on e's problem: alertname
// Holdfast<type>, severity, serviceset, cluster, service, and for an object its group, kind,
// namespace and name. Empty ones are left out.
func alertmanagerLabels(e Event, typ EventType) map[string]string {
	labels := map[string]string{}
	for k, v := range map[string]string{
		"alertname":  "Holdfast" + string(typ),
		"severity":   string(Event{Type: typ}.Severity()),
		"serviceset": e.MultiClusterService,
		"cluster":    e.Cluster.String(),
		"service":    e.Service,
		"group":      e.Object.Group,
		"kind":       e.Object.Kind,
		"namespace":  e.Object.Namespace,
		"name":       e.Object.Name,
	} {
		if v != "" && v != "/" {
			labels[k] = v
		}
	}
	return labels
}

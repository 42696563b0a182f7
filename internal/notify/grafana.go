package notify

import "net/http"

// grafanaConfigure reads the service account token annotations are created with (role Editor,
// or a role with the annotations:create permission).
func grafanaConfigure(t *Target, s secretKeys) (err error) {
	t.Token, err = s.requiredToken(SecretKeyToken)
	return err
}

// grafanaMessage creates an organisation-wide annotation (POST /api/annotations) at the time of
// e, tagged so that a dashboard's annotation query can select it: "holdfast", the event type,
// and serviceset:, cluster: and severity: tags.
func grafanaMessage(t Target, e Event) (message, error) {
	tags := []string{"holdfast", string(e.Type), "serviceset:" + e.MultiClusterService, "severity:" + string(e.Severity())}
	if e.Cluster.Name != "" {
		tags = append(tags, "cluster:"+e.Cluster.String())
	}
	m, err := jsonMessage(struct {
		Time int64    `json:"time"`
		Tags []string `json:"tags"`
		Text string   `json:"text"`
	}{e.Time.UnixMilli(), tags, summary(e, plain)})
	if err != nil {
		return message{}, err
	}
	if m.url, err = apiURL(t.URL, "api", "annotations"); err != nil {
		return message{}, err
	}
	m.header = http.Header{"Authorization": {"Bearer " + t.Token}}
	return m, nil
}

package notify

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
)

// CloudEvents attributes of Holdfast's events.
const (
	// CloudEventTypePrefix starts the type of every event: dev.holdfast.DriftDetected, ...
	CloudEventTypePrefix = "dev.holdfast."
	// CloudEventSourcePrefix starts the source of every event, which the service set's name
	// ends.
	CloudEventSourcePrefix = "/holdfast/multiclusterservices/"
)

// cloudEventsConfigure reads the mode: binary (the default) or structured.
func cloudEventsConfigure(t *Target, s secretKeys) error {
	mode, err := s.oneOf(SecretKeyMode, "binary", "binary", "structured")
	t.Structured = mode == "structured"
	return err
}

// cloudEventsMessage is Holdfast's JSON event as the data of a CloudEvent (specversion 1.0),
// written by the CloudEvents SDK's HTTP binding: in binary mode the attributes are ce-* headers
// and the body is the data; in structured mode the body is the whole event in
// application/cloudevents+json.
func cloudEventsMessage(t Target, e Event) (message, error) {
	data, err := e.MarshalJSON()
	if err != nil {
		return message{}, err
	}
	ce := event.New()
	ce.SetID(e.ID())
	ce.SetType(CloudEventTypePrefix + string(e.Type))
	ce.SetSource(CloudEventSourcePrefix + e.MultiClusterService)
	ce.SetSubject(cloudEventSubject(e))
	ce.SetTime(e.Time)
	// The data is set encoded, as JSON: SetData would mark bytes for base64 ("data_base64" in
	// structured mode), and re-encoding would change the bytes Webhook receivers get.
	ce.SetDataContentType(event.ApplicationJSON)
	ce.DataEncoded, ce.DataBase64 = data, false
	if err := ce.Validate(); err != nil {
		return message{}, err
	}
	ctx := binding.WithForceBinary(context.Background())
	if t.Structured {
		ctx = binding.WithForceStructured(context.Background())
	}
	req := &http.Request{Header: http.Header{}}
	if err := cehttp.WriteRequest(ctx, binding.ToMessage(&ce), req); err != nil {
		return message{}, err
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return message{}, err
	}
	return message{header: req.Header, body: body}, nil
}

// cloudEventSubject names what e is about within its service set: the cluster and the object
// (fleet/eu-1/Deployment/web/frontend), the cluster alone, or nothing for a rollout.
func cloudEventSubject(e Event) string {
	var parts []string
	for _, p := range []string{e.Cluster.Namespace, e.Cluster.Name, e.Object.Kind, e.Object.Namespace, e.Object.Name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/")
}

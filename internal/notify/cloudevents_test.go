package notify

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestCloudEventsDelivery: in each mode the receiver, decoding the request with the CloudEvents
// SDK as a CloudEvents consumer would, gets the event's attributes and Holdfast's JSON event as
// its data.
func TestCloudEventsDelivery(t *testing.T) {
	cases := []struct {
		mode        string
		contentType string
		check       func(t *testing.T, req call)
	}{
		{"", "application/json", func(t *testing.T, req call) {
			for name, want := range map[string]string{"Ce-Specversion": "1.0", "Ce-Type": "dev.holdfast.DriftDetected", "Ce-Id": deploymentDrift().ID(),
				"Ce-Source": "/holdfast/multiclusterservices/web", "Ce-Subject": "fleet/eu-1/Deployment/web/frontend"} {
				if got := req.header.Get(name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
		}},
		{"structured", "application/cloudevents+json", func(t *testing.T, req call) {
			var envelope map[string]any
			if err := json.Unmarshal(req.body, &envelope); err != nil || envelope["specversion"] != "1.0" || envelope["data"] == nil {
				t.Errorf("body is not a structured CloudEvent (%v):\n%s", err, req.body)
			}
			if v := req.header.Get("Ce-Type"); v != "" {
				t.Errorf("structured mode has the header Ce-Type = %q", v)
			}
		}},
	}
	for _, c := range cases {
		t.Run("mode "+c.mode, func(t *testing.T) {
			srv, got := receiver(t, http.StatusAccepted)
			data := map[string]string{"url": srv.URL + "/broker"}
			if c.mode != "" {
				data["mode"] = c.mode
			}
			req := deliverTo(t, resolve(t, holdfastv1.NotificationCloudEvents, data), deploymentDrift(), got)
			if req.method != http.MethodPost || req.uri != "/broker" || !strings.HasPrefix(req.header.Get("Content-Type"), c.contentType) {
				t.Errorf("request = %s %s, Content-Type %q; want POST /broker, %s", req.method, req.uri, req.header.Get("Content-Type"), c.contentType)
			}
			c.check(t, req)
			r, _ := http.NewRequest(req.method, req.uri, bytes.NewReader(req.body))
			r.Header = req.header
			ce, err := cehttp.NewEventFromHTTPRequest(r)
			if err != nil {
				t.Fatalf("the SDK cannot read the request as a CloudEvent: %v", err)
			}
			e := deploymentDrift()
			if ce.ID() != e.ID() || ce.Type() != "dev.holdfast.DriftDetected" || ce.Source() != "/holdfast/multiclusterservices/web" ||
				ce.Subject() != "fleet/eu-1/Deployment/web/frontend" || !ce.Time().Equal(e.Time) || ce.DataContentType() != "application/json" {
				t.Errorf("CloudEvent = %s", ce)
			}
			want, _ := e.MarshalJSON()
			if !bytes.Equal(ce.Data(), want) {
				t.Errorf("data = %s, want Holdfast's JSON event %s", ce.Data(), want)
			}
		})
	}
}

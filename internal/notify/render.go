package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Headers of a notification request.
const (
	// HeaderEvent carries the event type, so receivers can route without parsing the body.
	HeaderEvent = "X-Holdfast-Event"
	// HeaderSignature carries "sha256=" and the hex HMAC-SHA256 of the exact body, keyed with
	// the target's hmacKey; Webhook targets with a key only.
	HeaderSignature = "X-Holdfast-Signature"
)

// render returns the body and headers of e for t's type. e is already redacted.
func render(t Target, e Event) ([]byte, http.Header, error) {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "holdfast-notify")
	h.Set(HeaderEvent, string(e.Type))
	switch t.Type {
	case holdfastv1.NotificationWebhook, "":
		body, err := e.MarshalJSON()
		if err != nil {
			return nil, nil, fmt.Errorf("encoding the event: %w", err)
		}
		if len(t.HMACKey) > 0 {
			h.Set(HeaderSignature, "sha256="+sign(t.HMACKey, body))
		}
		return body, h, nil
	case holdfastv1.NotificationSlack:
		body, err := slackBody(e)
		if err != nil {
			return nil, nil, fmt.Errorf("encoding the Slack message: %w", err)
		}
		return body, h, nil
	default:
		return nil, nil, fmt.Errorf("%w %q: unknown type %q", ErrInvalidTarget, t.Name, t.Type)
	}
}

// encodeJSON is json.Marshal without HTML escaping, so that values such as Redacted and "→" read
// as they are, and without the encoder's trailing newline.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

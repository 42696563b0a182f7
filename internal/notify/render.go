package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Headers of a notification request.
const (
	// HeaderEvent carries the event type, so receivers can route without parsing the body.
	HeaderEvent = "X-Holdfast-Event"
	// HeaderTimestamp carries the Unix time, in seconds, of the attempt; each attempt, a
	// retry included, has its own. Signed requests only.
	HeaderTimestamp = "X-Holdfast-Timestamp"
	// HeaderSignature carries "v1=" and the hex HMAC-SHA256, keyed with the target's hmacKey,
	// of "v1:", HeaderTimestamp, ":" and the exact body; Webhook targets with a key only.
	// Verify checks it.
	HeaderSignature = "X-Holdfast-Signature"
)

// message is a rendered event, sent as is by every attempt.
type message struct {
	body   []byte
	header http.Header
	// key signs each attempt at its own time; nil for an unsigned message.
	key []byte
}

// headerAt returns the headers of an attempt made at now.
func (m message) headerAt(now time.Time) http.Header {
	h := m.header.Clone()
	if len(m.key) > 0 {
		stamp(h, m.key, m.body, now)
	}
	return h
}

// render returns the message of e for t's type. e is already redacted. Only Webhook messages
// are signed: Slack incoming webhooks do not check signatures.
func render(t Target, e Event) (message, error) {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "holdfast-notify")
	h.Set(HeaderEvent, string(e.Type))
	switch t.Type {
	case holdfastv1.NotificationWebhook, "":
		body, err := e.MarshalJSON()
		if err != nil {
			return message{}, fmt.Errorf("encoding the event: %w", err)
		}
		return message{body: body, header: h, key: t.HMACKey}, nil
	case holdfastv1.NotificationSlack:
		body, err := slackBody(e)
		if err != nil {
			return message{}, fmt.Errorf("encoding the Slack message: %w", err)
		}
		return message{body: body, header: h}, nil
	default:
		return message{}, fmt.Errorf("%w %q: unknown type %q", ErrInvalidTarget, t.Name, t.Type)
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

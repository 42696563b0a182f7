package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
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

// message is a rendered event, sent as is by every attempt: an HTTP request, or a mail when
// mail is set.
type message struct {
	// method and url of the request; POST and the target's URL when empty. A url may hold a
	// credential (Telegram's bot token): like the target's, it never appears in an error.
	method, url string
	header      http.Header
	body        []byte
	// key signs each attempt at its own time; nil for an unsigned message.
	key []byte
	// mail is sent over SMTP instead of a request (Email targets).
	mail *mailMessage
}

// headerAt returns the headers of an attempt made at now.
func (m message) headerAt(now time.Time) http.Header {
	h := m.header.Clone()
	if len(m.key) > 0 {
		stamp(h, m.key, m.body, now)
	}
	return h
}

// render returns the message of e for t's type, with the headers every request carries. e is
// already redacted.
func render(t Target, e Event) (message, error) {
	typ := t.Type
	if typ == "" {
		typ = holdfastv1.NotificationWebhook
	}
	p, ok := providers[typ]
	if !ok {
		return message{}, fmt.Errorf("%w %q: unknown type %q", ErrInvalidTarget, t.Name, t.Type)
	}
	m, err := p.render(t, e)
	if err != nil {
		return message{}, fmt.Errorf("encoding the %s message: %w", typ, err)
	}
	if m.mail != nil {
		return m, nil
	}
	if m.method == "" {
		m.method = http.MethodPost
	}
	if m.url == "" {
		m.url = t.URL
	}
	if m.header == nil {
		m.header = http.Header{}
	}
	if m.header.Get("Content-Type") == "" {
		m.header.Set("Content-Type", "application/json")
	}
	m.header.Set("User-Agent", "holdfast-notify")
	m.header.Set(HeaderEvent, string(e.Type))
	return m, nil
}

// jsonMessage is a message whose body is v in JSON.
func jsonMessage(v any) (message, error) {
	body, err := encodeJSON(v)
	if err != nil {
		return message{}, err
	}
	return message{body: body}, nil
}

// apiURL joins path to base, the API's base URL from the target's Secret. The error does not
// wrap url's, which would quote the base.
func apiURL(base string, path ...string) (string, error) {
	u, err := url.JoinPath(base, path...)
	if err != nil {
		return "", fmt.Errorf("joining the API's path to the target's url failed")
	}
	return u, nil
}

// withQuery sets a query parameter of u, a URL apiURL returned.
func withQuery(u, key, value string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := parsed.Query()
	q.Set(key, value)
	parsed.RawQuery = q.Encode()
	return parsed.String()
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

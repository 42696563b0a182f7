package notify

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Keys of a notification target's Secret. Each type reads url and the keys its provider names
// (docs/notifications.md has a table per type).
const (
	// SecretKeyURL holds the receiver's address: required, except for the types whose
	// receiver has a public default (PagerDuty, Opsgenie, Telegram).
	SecretKeyURL = "url"
	// SecretKeyHMACKey holds the key Webhook bodies are signed with (optional).
	SecretKeyHMACKey = "hmacKey"
	// SecretKeyToken holds a bot or API token: Telegram's bot token, Grafana's service
	// account token, Alertmanager's bearer token.
	SecretKeyToken = "token"
	// SecretKeyRoutingKey holds a PagerDuty service's integration (routing) key.
	SecretKeyRoutingKey = "routingKey"
	// SecretKeyAPIKey holds an Opsgenie API integration's key.
	SecretKeyAPIKey = "apiKey"
	// SecretKeyChatID holds the Telegram chat a bot writes to.
	SecretKeyChatID = "chatID"
	// SecretKeyChannel holds the Mattermost channel to post to, instead of the webhook's own.
	SecretKeyChannel = "channel"
	// SecretKeyUsername holds the user of SMTP AUTH (Email) or basic auth (Alertmanager), or the
	// name a message is posted as (Discord, Mattermost).
	SecretKeyUsername = "username"
	// SecretKeyPassword holds the password that goes with username (Email, Alertmanager).
	SecretKeyPassword = "password"
	// SecretKeyFrom and SecretKeyTo hold an Email target's sender and its comma-separated
	// recipients.
	SecretKeyFrom = "from"
	SecretKeyTo   = "to"
	// SecretKeyStartTLS says whether an Email target requires STARTTLS ("required", the
	// default) or uses it when offered ("opportunistic").
	SecretKeyStartTLS = "starttls"
	// SecretKeyCA holds PEM certificates an Email target's server is verified with, instead
	// of the system's.
	SecretKeyCA = "ca"
	// SecretKeyMode says how a CloudEvents target sends: "binary" (the default) or
	// "structured".
	SecretKeyMode = "mode"
)

// ErrInvalidTarget is wrapped by every error of TargetFromSecret: the declaration or its Secret
// must be fixed, retrying will not help.
var ErrInvalidTarget = errors.New("invalid notification target")

// Target is a resolved notification target. Everything but Name and Type comes from the Secret
// and is treated as a secret: Target prints, and logs through logr, as its name and type only.
//
// The Dispatcher keeps one queue per Name, so names must be unique across everything sent
// through it (e.g. prefixed with the MultiClusterService's name).
type Target struct {
	Name string
	Type holdfastv1.NotificationType
	// URL is the receiver's address: an http or https URL, or smtp:// or smtps:// for Email.
	// For the types with a REST API (Alertmanager, Grafana, Opsgenie, Telegram) it is the API's
	// base URL, which the request's path is joined to.
	URL string
	// HMACKey signs Webhook bodies.
	HMACKey []byte
	// Token is the type's credential: Telegram's bot token, PagerDuty's routing key, Opsgenie's
	// API key, Grafana's or Alertmanager's bearer token.
	Token string
	// Username and Password authenticate to an Email target's server (SMTP AUTH) or to an
	// Alertmanager (basic auth). For Discord and Mattermost, Username is the name messages are
	// posted as.
	Username, Password string
	// Channel is a Mattermost channel or a Telegram chat ID.
	Channel string
	// From and To are an Email target's sender and recipients.
	From string
	To   []string
	// OpportunisticTLS lets an Email target send without STARTTLS to a server that does not
	// offer it; by default a server without STARTTLS is refused.
	OpportunisticTLS bool
	// RootCAs verify an Email target's server instead of the system's roots, when set.
	RootCAs *x509.CertPool
	// Structured sends CloudEvents in structured mode (one application/cloudevents+json body)
	// instead of binary mode (ce-* headers and the data as the body).
	Structured bool
}

// TargetFromSecret resolves spec with its Secret, nil when the Secret does not exist. Errors
// name the Secret and the key at fault, never a value.
func TargetFromSecret(spec holdfastv1.NotificationTarget, secret *corev1.Secret) (Target, error) {
	ref := spec.SecretRef.Namespace + "/" + spec.SecretRef.Name
	invalid := func(err error) (Target, error) {
		return Target{}, fmt.Errorf("%w %q: %w", ErrInvalidTarget, spec.Name, err)
	}
	t := Target{Name: spec.Name, Type: spec.Type}
	if t.Type == "" {
		t.Type = holdfastv1.NotificationWebhook
	}
	p, ok := providers[t.Type]
	if !ok {
		return invalid(keyError(fmt.Sprintf("unknown type %q", spec.Type)))
	}
	if secret == nil {
		return invalid(keyError("Secret " + ref + " not found"))
	}
	s := secretKeys{secret: secret, ref: ref}
	raw, _ := s.value(SecretKeyURL)
	t.URL = strings.TrimSpace(raw)
	switch {
	case t.URL == "" && p.defaultURL != "":
		t.URL = p.defaultURL
	case t.URL == "":
		return invalid(s.missing(SecretKeyURL))
	}
	schemes := p.schemes
	if schemes == nil {
		schemes = []string{"http", "https"}
	}
	// The parse error is not wrapped: it would quote the URL.
	if u, err := url.Parse(t.URL); err != nil || !slices.Contains(schemes, u.Scheme) || u.Host == "" {
		return invalid(s.invalid(SecretKeyURL, "is not an %s URL", strings.Join(schemes, " or ")))
	}
	if p.configure != nil {
		if err := p.configure(&t, s); err != nil {
			return invalid(err)
		}
	}
	return t, nil
}

// secretKeys reads the keys of a target's Secret. Its errors name the Secret and the key,
// never a value.
type secretKeys struct {
	secret *corev1.Secret
	ref    string
}

// value reads key from data, or from stringData for a Secret that was never stored.
func (s secretKeys) value(key string) (string, bool) {
	if v, ok := s.secret.Data[key]; ok {
		return string(v), true
	}
	v, ok := s.secret.StringData[key]
	return v, ok
}

// required reads key, trimmed of surrounding whitespace; an error when it is absent or blank.
func (s secretKeys) required(key string) (string, error) {
	v, _ := s.value(key)
	if v = strings.TrimSpace(v); v == "" {
		return "", s.missing(key)
	}
	return v, nil
}

// token reads key, trimmed of surrounding whitespace: "" when absent, an error when present
// but empty or holding whitespace or control characters (it goes into a header or a URL).
func (s secretKeys) token(key string) (string, error) {
	raw, ok := s.value(key)
	if !ok {
		return "", nil
	}
	v := strings.TrimSpace(raw)
	if v == "" {
		return "", s.invalid(key, "is empty; remove it or give it a value")
	}
	if strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", s.invalid(key, "holds whitespace or control characters")
	}
	return v, nil
}

// requiredToken is token, an error when key is absent.
func (s secretKeys) requiredToken(key string) (string, error) {
	v, err := s.token(key)
	if err == nil && v == "" {
		err = s.missing(key)
	}
	return v, err
}

// oneOf reads key as one of values, def when absent.
func (s secretKeys) oneOf(key, def string, values ...string) (string, error) {
	v, err := s.token(key)
	if err != nil || v == "" {
		return def, err
	}
	if !slices.Contains(values, v) {
		return "", s.invalid(key, "is not %s", strings.Join(values, " or "))
	}
	return v, nil
}

func (s secretKeys) missing(key string) error {
	return keyError(fmt.Sprintf("Secret %s has no key %q", s.ref, key))
}

func (s secretKeys) invalid(key, format string, args ...any) error {
	return keyError(fmt.Sprintf("key %q of Secret %s %s", key, s.ref, fmt.Sprintf(format, args...)))
}

// keyError is what is wrong with a target's declaration or Secret, worded to follow the target's
// name in TargetFromSecret's error.
type keyError string

func (e keyError) Error() string { return string(e) }

// String names the target without its address or credentials.
func (t Target) String() string { return fmt.Sprintf("%s target %q", t.Type, t.Name) }

// GoString is String, so that %#v does not print the address or credentials either.
func (t Target) GoString() string { return t.String() }

// MarshalLog is what logr sinks print for a Target.
func (t Target) MarshalLog() any {
	return struct{ Name, Type string }{t.Name, string(t.Type)}
}

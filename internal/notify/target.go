package notify

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Keys of a notification target's Secret.
const (
	// SecretKeyURL holds the receiver's URL (required).
	SecretKeyURL = "url"
	// SecretKeyHMACKey holds the key Webhook bodies are signed with (optional).
	SecretKeyHMACKey = "hmacKey"
)

// ErrInvalidTarget is wrapped by every error of TargetFromSecret: the declaration or its Secret
// must be fixed, retrying will not help.
var ErrInvalidTarget = errors.New("invalid notification target")

// Target is a resolved notification target. URL and HMACKey are secrets: Target prints, and logs
// through logr, as its name and type only.
//
// The Dispatcher keeps one queue per Name, so names must be unique across everything sent
// through it (e.g. prefixed with the MultiClusterService's name).
type Target struct {
	Name    string
	Type    holdfastv1.NotificationType
	URL     string
	HMACKey []byte
}

// TargetFromSecret resolves spec with its Secret, nil when the Secret does not exist. Errors
// name the Secret and the key at fault, never a value.
func TargetFromSecret(spec holdfastv1.NotificationTarget, secret *corev1.Secret) (Target, error) {
	ref := spec.SecretRef.Namespace + "/" + spec.SecretRef.Name
	invalid := func(format string, args ...any) (Target, error) {
		return Target{}, fmt.Errorf("%w %q: %s", ErrInvalidTarget, spec.Name, fmt.Sprintf(format, args...))
	}
	t := Target{Name: spec.Name, Type: spec.Type}
	switch t.Type {
	case "":
		t.Type = holdfastv1.NotificationWebhook
	case holdfastv1.NotificationWebhook, holdfastv1.NotificationSlack:
	default:
		return invalid("unknown type %q", spec.Type)
	}
	if secret == nil {
		return invalid("Secret %s not found", ref)
	}
	raw, ok := secretValue(secret, SecretKeyURL)
	if !ok || strings.TrimSpace(string(raw)) == "" {
		return invalid("Secret %s has no key %q", ref, SecretKeyURL)
	}
	t.URL = strings.TrimSpace(string(raw))
	// The parse error is not wrapped: it would quote the URL.
	if u, err := url.Parse(t.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid("key %q of Secret %s is not an http or https URL", SecretKeyURL, ref)
	}
	if key, ok := secretValue(secret, SecretKeyHMACKey); ok {
		if len(key) == 0 {
			return invalid("key %q of Secret %s is empty; remove it to send unsigned", SecretKeyHMACKey, ref)
		}
		t.HMACKey = key
	}
	return t, nil
}

// secretValue reads key from data, or from stringData for a Secret that was never stored.
func secretValue(s *corev1.Secret, key string) ([]byte, bool) {
	if v, ok := s.Data[key]; ok {
		return v, true
	}
	v, ok := s.StringData[key]
	return []byte(v), ok
}

// String names the target without its URL or key.
func (t Target) String() string { return fmt.Sprintf("%s target %q", t.Type, t.Name) }

// GoString is String, so that %#v does not print the URL or key either.
func (t Target) GoString() string { return t.String() }

// MarshalLog is what logr sinks print for a Target.
func (t Target) MarshalLog() any {
	return struct{ Name, Type string }{t.Name, string(t.Type)}
}

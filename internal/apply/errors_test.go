package apply

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"holdfast.dev/holdfast/internal/fleet"
)

// TestMessage: what a target answered reaches a status only as fleet.Redact words it (no
// response body, a Status's message kept): for an object, the Status's message alone; for a
// service, inside Holdfast's own words around it (Describe). Holdfast's own reasons are kept.
func TestMessage(t *testing.T) {
	const marker = "internal-body-marker"
	configmaps := schema.GroupResource{Resource: "configmaps"}
	body := apierrors.NewGenericServerResponse(500, "patch", configmaps, "app", "internal service: "+marker, 0, true)
	redirect := &url.Error{Op: "Patch", URL: "https://10.0.0.1:6443/api/v1/namespaces/a/configmaps/app", Err: fmt.Errorf("%w (HTTP 302 Found)", fleet.ErrRedirect)}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"a body client-go quotes", body, "HTTP 500 Internal Server Error: the server is not a Kubernetes API server"},
		{"a body inside Holdfast's words", fmt.Errorf("applying 2 objects: listing ConfigMap: %w", body),
			"applying 2 objects: listing ConfigMap: HTTP 500 Internal Server Error"},
		{"a Status inside an error of its own wording", fmt.Errorf("withdrawing service %q: %w", "a", explained{apierrors.NewForbidden(configmaps, "app", errors.New("no"))}),
			`withdrawing service "a": forbidden as someone: grant it delete`},
		{"a Status's message", fmt.Errorf("reading live object: %w", apierrors.NewForbidden(configmaps, "app", errors.New("no"))),
			`reading live object: configmaps "app" is forbidden: no`},
		{"a redirect refused", fmt.Errorf("applying: %w", redirect), "answered with a redirect, which Holdfast does not follow (HTTP 302 Found)"},
		{"an answer that is no JSON", fmt.Errorf("decoding: %w", errors.New("invalid character '<': <html>"+marker)), "could not be read as a Kubernetes API response"},
		{"Holdfast's own reason", fmt.Errorf("%w: app is declared more than once", ErrDuplicate), "duplicate object: app is declared more than once"},
		{"a kind a target's discovery failed on", unknownKindError(schema.GroupVersionKind{Version: "v1", Kind: "Thing"}, body),
			"install its CustomResourceDefinition first (HTTP 500 Internal Server Error"},
		{"joined", errors.Join(fmt.Errorf("withdrawing service %q: %w", "a", body), fmt.Errorf("withdrawing service %q: %w", "b", redirect)),
			`withdrawing service "a": HTTP 500 Internal Server Error`},
	}
	if got, want := Message(fmt.Errorf("reading live object: %w", body)), "HTTP 500 Internal Server Error: the server is not a Kubernetes API server"; !strings.HasPrefix(got, want) {
		t.Errorf("Message of an object = %q, want %q...", got, want)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Describe(tc.err)
			if !strings.Contains(got, tc.want) {
				t.Errorf("Describe = %q, want it to say %q", got, tc.want)
			}
			if strings.Contains(got, marker) {
				t.Errorf("Describe quotes the answer: %q", got)
			}
			if object := Message(tc.err); strings.Contains(object, marker) {
				t.Errorf("Message quotes the answer: %q", object)
			}
		})
	}
}

// explained is an error that words the Status it wraps its own way, as fleet's impersonation
// errors do.
type explained struct{ *apierrors.StatusError }

func (e explained) Error() string { return "forbidden as someone: grant it delete" }
func (e explained) Unwrap() error { return e.StatusError }

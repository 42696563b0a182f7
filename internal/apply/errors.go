package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"holdfast.dev/holdfast/internal/fleet"
)

// Reasons an object fails before or apart from the API server's verdict. ObjectResult.Err wraps
// one of these (test with errors.Is) or the API server's error.
var (
	// ErrInvalidObject: the object lacks apiVersion, kind or name.
	ErrInvalidObject = errors.New("invalid object")
	// ErrUnknownKind: the cluster does not serve the object's kind; its CRD is not installed.
	ErrUnknownKind = errors.New("kind not served by the cluster")
	// ErrNoNamespace: a namespaced object declares no namespace and there is no default.
	ErrNoNamespace = errors.New("no namespace")
	// ErrTooLarge: the object exceeds MaxObjectSize.
	ErrTooLarge = errors.New("object too large")
	// ErrDuplicate: the same object is declared more than once.
	ErrDuplicate = errors.New("duplicate object")
	// ErrNotEstablished: a CRD was applied but did not become Established in time.
	ErrNotEstablished = errors.New("CustomResourceDefinition not established")
	// ErrBeingDeleted: the live object is being deleted (it has a deletionTimestamp, waiting for
	// finalizers); it is created again once it is gone, so it is transient.
	ErrBeingDeleted = errors.New("being deleted")
)

// MaxObjectSize is the largest object, in bytes of JSON, that Applier sends. It is etcd's default
// request limit (1.5 MiB): bigger objects can never be stored, and the API server reports them
// with a 500 that would otherwise look transient. ConfigMaps and Secrets are further limited to
// 1 MiB of data by API validation, which the API server reports itself.
const MaxObjectSize = 3 << 19

// IsTransient reports whether err is a fault worth retrying unchanged: rate limiting, server
// errors (including an admission webhook that cannot be reached), timeouts, optimistic-lock
// conflicts, connection failures and a CRD that is not Established yet. Rejections of the
// object itself (validation, a webhook's denial, an unknown kind, forbidden) are not transient:
// the declaration or the cluster's configuration has to change first.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	switch {
	case errors.Is(err, ErrNotEstablished), errors.Is(err, ErrBeingDeleted):
		return true
	case errors.Is(err, ErrInvalidObject), errors.Is(err, ErrUnknownKind), errors.Is(err, ErrNoNamespace),
		errors.Is(err, ErrTooLarge), errors.Is(err, ErrDuplicate), errors.Is(err, context.Canceled):
		return false
	case errors.Is(err, context.DeadlineExceeded):
		return true
	case apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), apierrors.IsConflict(err),
		apierrors.IsUnexpectedServerError(err):
		return true
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// The namespace was deleted and is going away; it is recreated once it is gone.
		return true
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Code >= 500
	}
	return fleet.AnswerLost(err) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// unknownKindError explains what to do about a kind the cluster does not serve.
func unknownKindError(gvk schema.GroupVersionKind, cause error) error {
	what := fmt.Sprintf("%s (%s)", gvk.Kind, gvk.Version)
	if gvk.Group != "" {
		what = fmt.Sprintf("%s (%s/%s)", gvk.Kind, gvk.Group, gvk.Version)
	}
	if cause != nil && !meta.IsNoMatchError(cause) {
		return fmt.Errorf("%w: %s: install its CustomResourceDefinition first (%s)", ErrUnknownKind, what, Message(cause))
	}
	return fmt.Errorf("%w: %s: install its CustomResourceDefinition first", ErrUnknownKind, what)
}

// ImmutableFields returns the fields an API server's refusal says are immutable (a Job's
// spec.template, a ConfigMap's data once it is immutable), or none when err is no such refusal.
// Only a deletion and re-creation can change them.
func ImmutableFields(err error) []string {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var fields []string
	for _, c := range status.Status().Details.Causes {
		if strings.Contains(c.Message, "immutable") {
			fields = append(fields, c.Field)
		}
	}
	return fields
}

// Message is the text a status shows for an object's failure: the API server's own message,
// without the client's wrapping, or Holdfast's own reason (the errors above) in its words. What
// a target answered goes through fleet.Redact, the rules of the probe's errors, so that a server
// a Cluster names cannot have a response body (its own, or an internal endpoint's it redirects
// to) quoted back to the Cluster's author: a Kubernetes Status keeps its message, an HTTP answer
// that is not one becomes its status code. A refusal to change immutable fields names the fields
// only: the API server's message quotes whole values (a pod template), which may be long and
// hold configuration.
func Message(err error) string {
	if ns := MissingNamespace(err); ns != "" {
		return fmt.Sprintf("namespace %s does not exist on the cluster: create it, or let Holdfast create it (the service's createNamespace); retried until it exists", ns)
	}
	if fields := ImmutableFields(err); len(fields) > 0 {
		return fmt.Sprintf("the change needs immutable fields changed (%s): only deleting and re-creating the object can do it; "+
			"set spec.drift.immutable.action: Recreate on the service set (or the service) to have Holdfast do that, "+
			"or delete the object on the cluster and Holdfast creates it as declared", strings.Join(fields, ", "))
	}
	if isAPIStatus(err) {
		return fleet.Redact(err).Error()
	}
	return Describe(err)
}

// Describe is the text a status shows for a service's failure (an apply or a withdrawal as a
// whole, an identity review): err's whole text, the words Holdfast wrapped around what a target
// answered kept, and that answer worded by fleet.Redact as in Message; errors joined are worded
// one by one.
func Describe(err error) string {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		parts := make([]string, 0, len(joined.Unwrap()))
		for _, e := range joined.Unwrap() {
			parts = append(parts, Describe(e))
		}
		return strings.Join(parts, "; ")
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		raw := status.Status().Message
		if e, ok := status.(error); ok {
			raw = e.Error()
		}
		redacted, full := fleet.Redact(err).Error(), err.Error()
		switch {
		case redacted == status.Status().Message:
			return full // nothing to redact: the Status, and the words around it, as they are
		case !strings.Contains(full, raw):
			return redacted
		}
		return strings.Replace(full, raw, redacted, 1)
	}
	if own(err) {
		return err.Error()
	}
	return fleet.Redact(err).Error()
}

func isAPIStatus(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status)
}

// own reports whether err is one of Holdfast's own reasons for an object, in its own words.
func own(err error) bool {
	for _, reason := range []error{ErrInvalidObject, ErrUnknownKind, ErrNoNamespace, ErrTooLarge, ErrDuplicate, ErrNotEstablished, ErrBeingDeleted} {
		if errors.Is(err, reason) {
			return true
		}
	}
	return false
}

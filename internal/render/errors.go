package render

import (
	"errors"
	"strings"
)

// Reasons of an *Error. They are meant to be used verbatim as condition
// reasons.
const (
	// ReasonInvalidSource: no source, several sources, or a source that is
	// incomplete (a chart without a name, a Kustomize file outside the root).
	ReasonInvalidSource = "InvalidSource"
	// ReasonInvalidYAML: a document does not parse as YAML or is not an object.
	ReasonInvalidYAML = "InvalidYAML"
	// ReasonMissingKindOrName: an object without apiVersion, kind or
	// metadata.name (generateName is refused: Holdfast needs stable names).
	ReasonMissingKindOrName = "MissingKindOrName"
	// ReasonTemplateFailed: a Go template (values or manifests) does not parse
	// or does not execute.
	ReasonTemplateFailed = "TemplateFailed"
	// ReasonInvalidValues: values are not a YAML map, do not match the chart's
	// values.schema.json, or make the chart's templates fail.
	ReasonInvalidValues = "InvalidValues"
	// ReasonKustomizeFailed: kustomize refused the overlay.
	ReasonKustomizeFailed = "KustomizeFailed"
	// ReasonChartNotFound: the repository or registry answered, and the chart
	// or a version matching the request is not there (or access is refused).
	ReasonChartNotFound = "ChartNotFound"
	// ReasonChartFetchFailed: the repository or registry could not be reached
	// or failed (network error, timeout, 5xx, 429, corrupt download). The
	// only transient reason.
	ReasonChartFetchFailed = "ChartFetchFailed"
	// ReasonObjectTooLarge: a rendered object is over MaxObjectSize as JSON.
	ReasonObjectTooLarge = "ObjectTooLarge"
	// ReasonDuplicateObject: the same group, kind, namespace and name twice.
	ReasonDuplicateObject = "DuplicateObject"
	// ReasonRenderLimitExceeded: the render went over one of its Limits
	// (output, objects, loop iterations) or a template function over its cap
	// (MaxValueBytes, MaxListLength). Not transient: the templates or values
	// have to change.
	ReasonRenderLimitExceeded = "RenderLimitExceeded"
	// ReasonRenderTimedOut: the render took longer than Limits.Timeout. It is
	// transient (retried with backoff): a busy controller can cause it as well
	// as the templates, whose work the other limits bound anyway.
	ReasonRenderTimedOut = "RenderTimedOut"
	// ReasonArtifactFetchFailed: an artifact's server or registry could not be
	// reached or failed. Transient, like ChartFetchFailed.
	ReasonArtifactFetchFailed = "ArtifactFetchFailed"
	// ReasonArtifactDigestMismatch: the downloaded artifact's digest is not the
	// one pinned; it is refused. The message names both.
	ReasonArtifactDigestMismatch = "ArtifactDigestMismatch"
	// ReasonInvalidArtifact: the artifact is not a tar.gz of regular files
	// inside its root within the size and count limits, has no file at the
	// path, or is not of the format asked for.
	ReasonInvalidArtifact = "InvalidArtifact"
)

// Error is a rendering failure. Error() is one sentence naming the service,
// the object or document, and what is wrong; it never contains Secret data or
// credentials. Use errors.As to get it and Transient to decide whether to
// retry.
type Error struct {
	// Reason is one of the Reason constants.
	Reason string
	// Service is the service being rendered (Request.Service).
	Service string
	// Object names what failed: "apps/v1 Deployment team-a/web", or where
	// a document came from and its position, e.g.
	// `ConfigMap team-a/web key "deploy.yaml", document 2 at line 14`.
	Object string
	// Message says what is wrong and, where it can, what to fix. It is
	// complete on its own: Err is not repeated in Error().
	Message string
	// Err is the underlying cause, for errors.Is and errors.As.
	Err error
}

// Error returns `service "web": <object>: <message>`.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Service != "" {
		b.WriteString("service \"")
		b.WriteString(e.Service)
		b.WriteString("\": ")
	}
	if e.Object != "" {
		b.WriteString(e.Object)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Transient reports whether err is worth retrying with backoff without any
// change to the declaration: a chart repository or registry that failed or
// did not answer, an artifact that could not be downloaded, a render that ran out of time, a cancelled or expired
// context, or an error Render does not know. Every other *Error needs a user to fix the declaration.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	var re *Error
	if errors.As(err, &re) {
		return re.Reason == ReasonChartFetchFailed || re.Reason == ReasonRenderTimedOut || re.Reason == ReasonArtifactFetchFailed
	}
	return true
}

// ReasonOf returns the Reason of the *Error in err's chain, or "" if there is
// none.
func ReasonOf(err error) string {
	var re *Error
	if errors.As(err, &re) {
		return re.Reason
	}
	return ""
}

func newError(reason, object, message string, cause error) *Error {
	return &Error{Reason: reason, Object: object, Message: message, Err: cause}
}

// withService names the service in the *Error that leaves Render; other
// errors (a cancelled context) pass through unchanged.
func withService(err error, service string) error {
	var re *Error
	if errors.As(err, &re) && re.Service == "" {
		re.Service = service
	}
	return err
}

package fleetview

import (
	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/drift"
)

// redactedValue replaces every value of a Secret's data the CLI would show. The controller
// already redacts them in what it records; the CLI does so again, so that a controller bug or
// an older record cannot leak a Secret to a terminal or a CI log.
const redactedValue = "(redacted)"

// secretData reports whether path, in structured-merge-diff (`.data.key`) or JSON pointer
// (`/data/key`) notation, holds Secret data of a core/v1 Secret: the rule is the drift
// package's (drift.SecretValuePath), which the controller redacts by.
func secretData(ref holdfastv1.ResourceRef, path string) bool {
	return ref.Group == "" && ref.Kind == "Secret" && drift.SecretValuePath(path)
}

// redact keeps "absent" visible: it says nothing about the value.
func redact(v string) string {
	if v == "" {
		return ""
	}
	return redactedValue
}

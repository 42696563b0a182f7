package fleetview

import (
	"strings"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// redactedValue replaces every value of a Secret's data the CLI would show. The controller
// already redacts them in what it records; the CLI does so again, so that a controller bug or
// an older record cannot leak a Secret to a terminal or a CI log.
const redactedValue = "(redacted)"

// secretData reports whether path, in structured-merge-diff (`.data.key`) or JSON pointer
// (`/data/key`) notation, is in the data of a core/v1 Secret, or holds it (the root).
func secretData(ref holdfastv1.ResourceRef, path string) bool {
	if ref.Group != "" || ref.Kind != "Secret" {
		return false
	}
	p := strings.TrimLeft(path, "./")
	if p == "" {
		return true
	}
	for _, field := range []string{"data", "stringData"} {
		if rest, ok := strings.CutPrefix(p, field); ok && (rest == "" || strings.ContainsAny(rest[:1], "./[")) {
			return true
		}
	}
	return false
}

// redact keeps "absent" visible: it says nothing about the value.
func redact(v string) string {
	if v == "" {
		return ""
	}
	return redactedValue
}

package apply

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/fieldset"
)

// DesiredDigest is the digest of obj as it will be applied, an inventory digest
// (fieldset.ObjectDigest) of its canonical JSON (encoding/json sorts map keys). Compute it after
// namespace defaulting and labels; compare it with fieldset.SameDigest.
func DesiredDigest(obj *unstructured.Unstructured) (string, error) {
	d, _, err := desiredDigest(obj)
	return d, err
}

// desiredDigest also returns the size of obj's JSON encoding.
func desiredDigest(obj *unstructured.Unstructured) (string, int, error) {
	b, err := json.Marshal(obj.Object)
	if err != nil {
		return "", 0, fmt.Errorf("encoding %s: %w", RefOf(obj), err)
	}
	return fieldset.ObjectDigest(b), len(b), nil
}

package fieldset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// digestPrefix starts every digest, naming its hash.
const digestPrefix = "sha256:"

// OwnedDigest is the digest of the values of the fields manager owns in obj through server-side
// apply (see OwnedFields): the SHA-256 over the API version of manager's managedFields entry and
// each owned leaf's path and canonical JSON value, or a marker when the field is missing.
//
// It is stable under everything that does not change a value manager set: server defaulting,
// status, fields and list items of other managers, annotations added by controllers,
// resourceVersion and managedFields timestamps. It changes when another manager changes a value
// manager owns (the field then changes hands or the value differs), or removes it. It is empty
// when manager owns nothing in obj.
func OwnedDigest(obj *unstructured.Unstructured, manager string) (string, error) {
	fields, apiVersion, err := OwnedFields(obj, manager)
	if err != nil {
		return "", err
	}
	d, err := FieldsDigest(apiVersion, fields)
	if err != nil {
		return "", fmt.Errorf("digest of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return d, nil
}

// FieldsDigest is OwnedDigest of fields read already, owned through an entry recorded at
// apiVersion ("" when nothing is owned: the digest is then empty).
func FieldsDigest(apiVersion string, fields []FieldValue) (string, error) {
	if apiVersion == "" {
		return "", nil
	}
	h := sha256.New()
	writeLine(h, "apiVersion", apiVersion)
	for _, f := range fields {
		if !f.Present {
			writeLine(h, f.Path, "<absent>")
			continue
		}
		b, err := json.Marshal(f.Value)
		if err != nil {
			return "", fmt.Errorf("encoding %s: %w", f.Path, err)
		}
		writeLine(h, f.Path, string(b))
	}
	return digestPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

// Digest is the digest of b in the form every digest Holdfast records takes: "sha256:" and the
// hex SHA-256.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return digestPrefix + hex.EncodeToString(sum[:])
}

// writeLine writes a length-prefixed key and value, so that no two field lists hash alike.
func writeLine(h hash.Hash, k, v string) {
	_, _ = fmt.Fprintf(h, "%d:%s=%d:%s\n", len(k), k, len(v), v)
}

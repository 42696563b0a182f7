package fieldset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// digestPrefix starts every digest, naming its hash.
const digestPrefix = "sha256:"

// The inventory records two digests of each object it lists (the declaration as applied, and
// the values of the fields Holdfast owns: OwnedDigest), in a status object per (service set,
// cluster), for every object of the fleet, and every status patch carries them. They are written
// short: the first 128 bits of the SHA-256, in hex (ObjectDigest), 32 characters instead of the
// 71 of "sha256:" and the whole sum. A comparison of them only decides whether an apply may be
// skipped, and 128 bits keep a collision out of reach (2^64 work). Inventories recorded before
// hold the long form; SameDigest compares either with either, so nothing is applied again for
// it.

// ObjectDigestSize is the size in bytes of an inventory digest (ObjectDigest).
const ObjectDigestSize = 16

// ObjectDigest is the inventory digest of b: the first ObjectDigestSize bytes of its SHA-256,
// in hex.
func ObjectDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:ObjectDigestSize])
}

// SameDigest reports whether two inventory digests, each short (ObjectDigest) or long
// ("sha256:" and the whole sum, as recorded before), are of the same content. Two empty
// digests are the same.
func SameDigest(a, b string) bool {
	return a == b || shortDigest(a) == shortDigest(b)
}

// shortDigest is the short form of an inventory digest, d itself when it is not the long form.
func shortDigest(d string) string {
	if h, ok := strings.CutPrefix(d, digestPrefix); ok && len(h) == 2*sha256.Size {
		return h[:2*ObjectDigestSize]
	}
	return d
}

// FormatObjectDigest is the inventory digest of the bytes FieldsSum returned.
func FormatObjectDigest(b [ObjectDigestSize]byte) string { return hex.EncodeToString(b[:]) }

// OwnedDigest is the digest of the values of the fields manager owns in obj through server-side
// apply (see OwnedFields), an inventory digest (ObjectDigest): the SHA-256 over the API version
// of manager's managedFields entry and each owned leaf's path and canonical JSON value, or a
// marker when the field is missing.
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
	sum, err := FieldsSum(apiVersion, fields)
	if err != nil {
		return "", err
	}
	return FormatObjectDigest(sum), nil
}

// FieldsSum is FieldsDigest as bytes, as a drift snapshot keeps it: zero when nothing is owned
// (apiVersion "").
func FieldsSum(apiVersion string, fields []FieldValue) (sum [ObjectDigestSize]byte, _ error) {
	if apiVersion == "" {
		return sum, nil
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
			return sum, fmt.Errorf("encoding %s: %w", f.Path, err)
		}
		writeLine(h, f.Path, string(b))
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// Digest is the digest of b in the form the digests of renders, revisions and sources take:
// "sha256:" and the hex SHA-256 (an inventory's are short: ObjectDigest).
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return digestPrefix + hex.EncodeToString(sum[:])
}

// writeLine writes a length-prefixed key and value, so that no two field lists hash alike.
func writeLine(h hash.Hash, k, v string) {
	_, _ = fmt.Fprintf(h, "%d:%s=%d:%s\n", len(k), k, len(v), v)
}

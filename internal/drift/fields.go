package drift

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/fieldset"
)

// Redacted replaces every value shown from a Secret.
const Redacted = "<redacted>"

// maxValue bounds a value shown in a field change.
const maxValue = 256

// FieldChange is one field Holdfast applied whose value someone else changed.
type FieldChange struct {
	// Path in structured-merge-diff notation, e.g. `.spec.replicas`.
	Path string
	// Old and New are JSON; "" when the field was absent. Secret values are Redacted.
	Old, New string
}

// diffValues compares the encodings of fields before with their values now, leaf by leaf (both
// follow the same field set).
func diffValues(before []string, now []fieldset.FieldValue, secret bool) []FieldChange {
	var out []FieldChange
	for i, f := range now {
		if i >= len(before) {
			break
		}
		if enc := encodeValue(f, secret); enc != before[i] {
			out = append(out, FieldChange{Path: f.Path, Old: display(before[i]), New: display(enc)})
		}
	}
	sortChanges(out)
	return out
}

func isSecret(u *unstructured.Unstructured) bool {
	return u.GetKind() == "Secret" && u.GroupVersionKind().Group == ""
}

// LastAppliedAnnotation is kubectl's client-side apply annotation: the whole object as kubectl
// last applied it, so on a Secret its data.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// secretPaths are the fields of a core/v1 Secret that hold its data, dot-separated, without the
// leading dot (see SecretValuePath).
var secretPaths = []string{"data", "stringData", "metadata.annotations." + strings.ReplaceAll(LastAppliedAnnotation, "/", ".")}

// secretHolders are the fields that hold one of secretPaths whole: the object, its metadata and
// its annotations.
var secretHolders = []string{"", "metadata", "metadata.annotations"}

// SecretValuePath reports whether the field at path of a core/v1 Secret holds Secret data, so
// that its value must never be shown: the data and stringData, kubectl's last-applied
// annotation (LastAppliedAnnotation), anything below them, and what holds one of them whole
// (the annotations, the metadata, the object). path is in structured-merge-diff notation
// (`.data.password`, as FieldChange.Path) or a JSON pointer (`/data/password`, as older drift
// records may hold). It is the one rule of what is Secret data in a drift: the controller
// redacts by it, and the CLI again (package fleetview).
//
// "/" and "." are compared alike, so that a pointer that does not escape the "/" in the
// annotation's name is covered too; the error this allows is only ever to redact more.
func SecretValuePath(path string) bool {
	p := path
	if strings.HasPrefix(p, "/") {
		p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	p = strings.TrimLeft(strings.ReplaceAll(p, "/", "."), ".")
	for _, h := range secretHolders {
		if p == h {
			return true
		}
	}
	for _, s := range secretPaths {
		if rest, ok := strings.CutPrefix(p, s); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			return true
		}
	}
	return false
}

// BinaryValuePath reports whether the field at path (structured-merge-diff or JSON pointer
// notation, as SecretValuePath) holds binary data as base64 text, which a drift shows as its
// size and digest (ShowBinary), never the text: a ConfigMap's binaryData and anything below
// it, and a caBundle at any depth (webhook configurations, APIServices, CRD conversion). The
// rule goes by the path alone, whatever the kind: a field of another kind under that name is
// only ever shown less.
func BinaryValuePath(path string) bool {
	p := strings.TrimLeft(strings.ReplaceAll(path, "/", "."), ".")
	if rest, ok := strings.CutPrefix(p, "binaryData"); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
		return true
	}
	return p == "caBundle" || strings.HasSuffix(p, ".caBundle")
}

// ShowBinary is what a drift shows of a binary value v (a base64 string, or a map or list of
// them, as BinaryValuePath's fields hold): its decoded size and SHA-256, which a user can check
// against a file with sha256sum, e.g. "<binary: 1024 bytes, sha256:5f70bf18a0860070…>". A
// string that is not base64 is measured as it is.
func ShowBinary(v any) string {
	h := sha256.New()
	n := binaryBytes(h, v)
	return fmt.Sprintf("<binary: %d bytes, sha256:%s…>", n, hex.EncodeToString(h.Sum(nil))[:binaryDigestShown])
}

// binaryDigestShown is how many hex digits of a binary value's SHA-256 ShowBinary shows.
const binaryDigestShown = 16

// binaryBytes writes the bytes of v (decoded from base64 where they are) to h, map values in
// key order, and returns how many there were.
func binaryBytes(h hash.Hash, v any) int {
	switch t := v.(type) {
	case string:
		b, err := base64.StdEncoding.DecodeString(t)
		if err != nil {
			b = []byte(t)
		}
		h.Write(b)
		return len(b)
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		n := 0
		for _, k := range keys {
			n += binaryBytes(h, t[k])
		}
		return n
	case []any:
		n := 0
		for _, e := range t {
			n += binaryBytes(h, e)
		}
		return n
	}
	b, _ := json.Marshal(v)
	h.Write(b)
	return len(b)
}

// ShowBinaryText is ShowBinary for a value a drift record already shows as text (its JSON, as
// FieldChange.Old and New hold): records made before binary values were shown as digests, which
// the CLI shows the same way. A value cut short ("…") can no longer be measured: "<binary>".
func ShowBinaryText(shown string) string {
	var v any
	switch {
	case shown == "" || strings.HasPrefix(shown, "<binary"):
		return shown
	case json.Unmarshal([]byte(shown), &v) != nil:
		return "<binary>"
	}
	return ShowBinary(v)
}

// Markers of value encodings that are not the value's JSON.
const (
	markRedacted  = "\x01" // a Secret value: its keyed hash only
	markTruncated = "\x02" // a long value: its hash, then the start shown to users
	markBinary    = "\x03" // a binary value: what ShowBinary shows, which holds its hash
)

// hashLen is the length, in hex digits, of the hashes in value encodings (128 bits).
const hashLen = 32

// secretKey keys the hashes of Secret values, so that a memory dump does not allow guessing
// short secrets by hashing candidates. It is per process: encodings are only ever compared
// within one.
var secretKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand panics instead on an unusable system)
	return k
}()

// encodeValue is what a snapshot keeps of one owned field: "" when absent; for a Secret's data
// (SecretValuePath), a keyed hash; for binary data (BinaryValuePath), its size and digest; else its JSON when that is at most maxValue bytes, or a hash
// of the JSON and its first maxValue bytes. Two values are equal exactly when their encodings
// are (up to hash collisions), and display(encodeValue(v)) is what a FieldChange shows of v. No
// encoding holds a NUL byte (JSON escapes control characters).
func encodeValue(f fieldset.FieldValue, secret bool) string {
	if !f.Present {
		return ""
	}
	b, err := json.Marshal(f.Value)
	if err != nil {
		return "?"
	}
	switch {
	case secret && SecretValuePath(f.Path):
		m := hmac.New(sha256.New, secretKey)
		m.Write(b)
		return markRedacted + hex.EncodeToString(m.Sum(nil))[:hashLen]
	case BinaryValuePath(f.Path):
		return markBinary + ShowBinary(f.Value)
	case len(b) <= maxValue:
		return string(b)
	default:
		sum := sha256.Sum256(b)
		return markTruncated + hex.EncodeToString(sum[:])[:hashLen] + string(b[:maxValue])
	}
}

// display is what a FieldChange shows of an encoded value.
func display(enc string) string {
	switch {
	case strings.HasPrefix(enc, markRedacted):
		return Redacted
	case strings.HasPrefix(enc, markTruncated):
		return enc[len(markTruncated)+hashLen:] + "…"
	case strings.HasPrefix(enc, markBinary):
		return enc[len(markBinary):]
	default:
		return enc
	}
}

func sortChanges(c []FieldChange) {
	sort.Slice(c, func(i, j int) bool { return c[i].Path < c[j].Path })
}

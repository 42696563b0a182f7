package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Digest returns what Result.Digest holds for objects: "sha256:<hex>" over
// the canonical JSON of each object, in order. Callers that keep a rendering
// use it to check that what they read back is what was rendered.
func Digest(objects []*unstructured.Unstructured) (string, error) {
	d := newDigest()
	for _, o := range objects {
		raw, err := json.Marshal(o.Object)
		if err != nil {
			return "", fmt.Errorf("encoding %s as JSON: %w", objectRef(o), err)
		}
		d.add(raw)
	}
	return d.sum(), nil
}

// digest accumulates the digest of a rendered set, one object's JSON at a time.
type digest struct{ h hash.Hash }

func newDigest() digest { return digest{h: sha256.New()} }

func (d digest) add(raw []byte) {
	d.h.Write(raw)
	d.h.Write([]byte{'\n'})
}

func (d digest) sum() string { return "sha256:" + hex.EncodeToString(d.h.Sum(nil)) }

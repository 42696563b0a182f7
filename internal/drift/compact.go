package drift

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"unique"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"holdfast.dev/holdfast/internal/apply"
)

// Compactor is the cache transform of one target cluster (cache.Options.DefaultTransform): it
// turns every object an informer of the cache receives into a Snapshot, and, where it has an
// earlier snapshot of the same object, records on the new snapshot how the fields Holdfast owned
// changed, for the drift handler to report. It is safe for concurrent use by the cache's
// informers.
//
// It keeps the latest snapshot of each object (the one the informer will store next) so that
// it compares every version with the one before, in the order the watch delivers them, before
// the informer has stored either. The drift handler makes it forget deleted objects.
type Compactor struct {
	mu   sync.Mutex
	last map[snapshotKey]*Snapshot
}

type snapshotKey struct {
	groupVersion, kind, namespace unique.Handle[string]
	name                          string
}

func (s *Snapshot) key() snapshotKey {
	return snapshotKey{groupVersion: s.groupVersion, kind: s.kind, namespace: s.namespace, name: s.name()}
}

// NewCompactor returns a compactor for one cluster's cache.
func NewCompactor() *Compactor { return &Compactor{last: map[snapshotKey]*Snapshot{}} }

// Transform is a client-go TransformFunc. It compacts unstructured objects (the drift watches'),
// returns snapshots as they are (the informer may transform an object twice, e.g. after a
// streamed list) and leaves other objects alone. It never fails: an object whose managedFields
// cannot be read becomes a snapshot that owns nothing.
func (c *Compactor) Transform(obj any) (any, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return c.compact(o), nil
	default:
		return obj, nil
	}
}

func (c *Compactor) compact(u *unstructured.Unstructured) *Snapshot {
	key := snapshotKey{groupVersion: intern(u.GetAPIVersion()), kind: intern(u.GetKind()), namespace: intern(u.GetNamespace()), name: u.GetName()}
	c.mu.Lock()
	prev := c.last[key]
	c.mu.Unlock()
	if prev != nil && prev.uid() != u.GetUID() {
		prev = nil // another object of the same name: a recreation, not a change
	}
	if prev != nil && prev.resourceVersion() == u.GetResourceVersion() {
		return prev // the same version again (a relist): keep the stored snapshot
	}
	s := &Snapshot{
		groupVersion: key.groupVersion, kind: key.kind, namespace: key.namespace,
		labels: encodePairs(u.GetLabels()), annotations: encodePairs(u.GetAnnotations()),
		deletionTimestamp: u.GetDeletionTimestamp(),
		from:              c,
	}
	secret := isSecret(u)
	sets, err := apply.ParseManagedFields(u, apply.FieldManager)
	var values strings.Builder
	if err == nil && sets.Entry != nil {
		now := sets.ValuesOf(u, sets.Owned)
		s.fieldSet = intern(string(sets.Entry.FieldsV1.Raw))
		for _, f := range now {
			values.WriteString(encodeValue(f, secret))
			values.WriteByte(0)
		}
		if d, err := apply.FieldsDigest(sets.Entry.APIVersion, now); err == nil {
			_, _ = hex.Decode(s.digest[:], []byte(strings.TrimPrefix(d, "sha256:")))
		}
	}
	// One allocation for the strings, none of them shared with the decoded object.
	s.setText(key.name, u.GetUID(), u.GetResourceVersion(), values.String())

	switch {
	case prev == nil:
	case err != nil:
		ctrl.Log.WithName("drift").V(1).Info("Cannot read the managed fields of a changed object", "kind", u.GetKind(), "namespace", u.GetNamespace(), "name", u.GetName(), "error", err.Error())
		if prev.fieldSet != (unique.Handle[string]{}) {
			// Cannot tell what changed: report it without fields, the reconcile compares.
			s.pending.Store(&pendingChange{})
		}
	default:
		if p := changeSince(prev, s, u, sets, secret); p != nil {
			s.pending.Store(p)
		}
	}

	c.mu.Lock()
	c.last[s.key()] = s // the snapshot's key: its strings are the snapshot's own
	c.mu.Unlock()
	return s
}

// forget drops s, the last snapshot of an object that is gone, unless a newer one replaced it.
func (c *Compactor) forget(s *Snapshot) {
	k := s.key()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last[k] == s {
		delete(c.last, k)
	}
}

// changeSince returns how the fields Holdfast owned in prev changed in u (whose snapshot is s
// and parsed managedFields sets), or nil if none did.
func changeSince(prev, s *Snapshot, u *unstructured.Unstructured, sets apply.ManagedSets, secret bool) *pendingChange {
	if prev.fieldSet == (unique.Handle[string]{}) || (prev.fieldSet == s.fieldSet && prev.values() == s.values()) {
		return nil
	}
	set, before, err := prev.owned()
	if err != nil {
		return nil // cannot happen: the set was parsed when prev was made
	}
	fields := ownedChanges(before, set, u, sets, secret)
	if len(fields) == 0 {
		// No field Holdfast owned before has another value, or only fields Holdfast still owns
		// changed: Holdfast took fields back (its own correction) or applied a new declaration,
		// which is not drift.
		return nil
	}
	return &pendingChange{fields: fields, author: AuthorOf(u, fields)}
}

// ownedChanges compares the encodings of the fields Holdfast owned before (field set was, values
// before) with their values in u (whose parsed managedFields are now), and drops the changes
// Holdfast made itself (see withoutOwnWrites). Both the snapshots and Diff decide drift with it.
func ownedChanges(before []string, was *fieldpath.Set, u *unstructured.Unstructured, now apply.ManagedSets, secret bool) []FieldChange {
	return withoutOwnWrites(diffValues(before, now.ValuesOf(u, was), secret), now.ValuesOf(u, now.Owned))
}

// diffValues compares the encodings of fields before with their values now, leaf by leaf (both
// follow the same field set).
func diffValues(before []string, now []apply.FieldValue, secret bool) []FieldChange {
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

// Markers of value encodings that are not the value's JSON.
const (
	markRedacted  = "\x01" // a Secret value: its keyed hash only
	markTruncated = "\x02" // a long value: its hash, then the start shown to users
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

// encodeValue is what a snapshot keeps of one owned field: "" when absent; for a Secret's data,
// a keyed hash; else its JSON when that is at most maxValue bytes, or a hash of the JSON and its
// first maxValue bytes. Two values are equal exactly when their encodings are (up to hash
// collisions), and display(encodeValue(v)) is what a FieldChange shows of v. No encoding holds
// a NUL byte (JSON escapes control characters).
func encodeValue(f apply.FieldValue, secret bool) string {
	if !f.Present {
		return ""
	}
	b, err := json.Marshal(f.Value)
	if err != nil {
		return "?"
	}
	switch {
	case secret && (strings.HasPrefix(f.Path, ".data") || strings.HasPrefix(f.Path, ".stringData")):
		m := hmac.New(sha256.New, secretKey)
		m.Write(b)
		return markRedacted + hex.EncodeToString(m.Sum(nil))[:hashLen]
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
	default:
		return enc
	}
}

// withoutOwnWrites drops the changes of fields Holdfast still owns, with a value, in the new
// object: another manager's Update or forced Apply takes the fields it changes, so a field
// Holdfast still holds was changed by Holdfast itself (a new declaration applied).
func withoutOwnWrites(changes []FieldChange, ownedNow []apply.FieldValue) []FieldChange {
	if len(changes) == 0 {
		return changes
	}
	mine := make(map[string]bool, len(ownedNow))
	for _, f := range ownedNow {
		if f.Present {
			mine[f.Path] = true
		}
	}
	out := changes[:0:0]
	for _, c := range changes {
		if !mine[c.Path] {
			out = append(out, c)
		}
	}
	return out
}

package drift

import (
	"encoding/hex"
	"strings"
	"sync"
	"unique"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"

	"holdfast.dev/holdfast/internal/fieldset"
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
	sets, err := fieldset.ParseManagedFields(u, fieldset.FieldManager)
	var values strings.Builder
	if err == nil && sets.Entry != nil {
		now := sets.ValuesOf(u, sets.Owned)
		s.fieldSet = intern(sets.Entry.FieldsV1.GetRawString())
		for _, f := range now {
			values.WriteString(encodeValue(f, secret))
			values.WriteByte(0)
		}
		if d, err := fieldset.FieldsDigest(sets.Entry.APIVersion, now); err == nil {
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
// and parsed managedFields sets), or nil if none did in a way that counts (see Decide). A
// claimed change is returned marked, for the receiver to tell whether Holdfast made it.
func changeSince(prev, s *Snapshot, u *unstructured.Unstructured, sets fieldset.ManagedSets, secret bool) *pendingChange {
	if prev.fieldSet == (unique.Handle[string]{}) || (prev.fieldSet == s.fieldSet && prev.values() == s.values()) {
		return nil
	}
	v := decide(prev, observed{obj: u, sets: sets, secret: secret}, nil)
	switch {
	case v.Drifted:
		return &pendingChange{fields: v.Fields, author: v.Author}
	case len(v.Claimed) > 0:
		return &pendingChange{fields: v.Claimed, author: v.Author, claimed: true}
	}
	return nil
}

// candidates compares the encodings of the fields Holdfast owned in s with their values in
// live, leaf by leaf (both follow s's field set).
func (s *Snapshot) candidates(live observed) []FieldChange {
	set, before, err := s.owned()
	if err != nil || set == nil {
		return nil // cannot happen: the set was parsed when s was made
	}
	return diffValues(before, live.sets.ValuesOf(live.obj, set), live.secret)
}

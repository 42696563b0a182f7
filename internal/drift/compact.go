package drift

import (
	"strings"
	"sync"
	"sync/atomic"
	"unique"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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
//
// A compactor of Applied (Applied.Compactor) keeps a full snapshot only of objects an inventory
// of its cluster holds and at most MaxSnapshotBytes of each; any other object becomes a stub (see
// stubKind). NewCompactor's keeps every object in full.
type Compactor struct {
	mu   sync.Mutex
	last map[snapshotKey]*Snapshot

	// applied and cluster, when set, say which objects are Holdfast's (Applied.Compactor);
	// ofCache: the compactor of a connection's cache (Applied.Transform).
	applied *Applied
	cluster types.NamespacedName
	ofCache bool
	// usage is what the compactor keeps, for Applied.Usage.
	usage struct{ full, bytes, oversized, foreign atomic.Int64 }
	// released: its informers stopped or are about to (Release); it no longer counts in
	// its cluster's bound.
	released atomic.Bool
}

// admitForeign counts a new stub of an unregistered object in the cluster's bound, or refuses
// it (Applied.admitForeign).
func (c *Compactor) admitForeign(gvk schema.GroupVersionKind) error {
	if c.applied == nil || c.released.Load() {
		return nil
	}
	return c.applied.admitForeign(c.cluster, gvk)
}

// dropForeign uncounts a stub of an unregistered object from the cluster's bound.
func (c *Compactor) dropForeign() {
	if c.applied != nil && !c.released.Load() {
		c.applied.dropForeign(c.cluster)
	}
}

type snapshotKey struct {
	groupVersion, kind, namespace unique.Handle[string]
	name                          string
}

func (s *Snapshot) key() snapshotKey {
	return snapshotKey{groupVersion: s.groupVersion, kind: s.kind, namespace: s.namespace, name: s.name()}
}

// NewCompactor returns a compactor for one cluster's cache that keeps every object in full.
func NewCompactor() *Compactor { return &Compactor{last: map[snapshotKey]*Snapshot{}} }

// Transform is a client-go TransformFunc. It compacts unstructured objects (the drift watches'),
// returns snapshots as they are (the informer may transform an object twice, e.g. after a
// streamed list) and leaves other objects alone. It fails only to refuse a labelled object
// Holdfast did not apply past MaxForeignObjects (ErrTooManyForeignObjects): an object whose
// managedFields cannot be read becomes a snapshot that owns nothing.
func (c *Compactor) Transform(obj any) (any, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return c.compact(o)
	default:
		return obj, nil
	}
}

// registered reports whether u is Holdfast's: in an inventory of the compactor's cluster.
func (c *Compactor) registered(key snapshotKey) bool {
	if c.applied == nil {
		return true
	}
	gv, _ := schema.ParseGroupVersion(value(key.groupVersion))
	return c.applied.registered(c.cluster, objectKey{group: intern(gv.Group), kind: key.kind, namespace: key.namespace, name: key.name})
}

func (c *Compactor) compact(u *unstructured.Unstructured) (*Snapshot, error) {
	key := snapshotKey{groupVersion: intern(u.GetAPIVersion()), kind: intern(u.GetKind()), namespace: intern(u.GetNamespace()), name: u.GetName()}
	c.mu.Lock()
	stored := c.last[key]
	c.mu.Unlock()
	prev := stored
	if prev != nil && prev.uid() != u.GetUID() {
		prev = nil // another object of the same name: a recreation, not a change
	}
	ours := c.registered(key)
	sameVersion := prev != nil && prev.resourceVersion() == u.GetResourceVersion()
	if sameVersion && (prev.stub != stubForeign || !ours) {
		return prev, nil // the same version again (a relist): keep the stored snapshot
	}
	if !ours {
		if stored == nil || stored.stub != stubForeign {
			if err := c.admitForeign(u.GroupVersionKind()); err != nil {
				return nil, err
			}
		}
		s := newStub(key, u, stubForeign, c)
		c.store(s)
		return s, nil
	}
	s, sets, err := c.snapshot(key, u)
	switch {
	case prev == nil:
	case prev.stub != stubNone || s.stub != stubNone:
		// The watch cannot compare with a stub, nor a stub with anything: the reconcile does.
		// A stub of an object now registered was taken before it was (see Applied).
		s.pending.Store(&pendingChange{compare: true})
	case err != nil:
		ctrl.Log.WithName("drift").V(1).Info("Cannot read the managed fields of a changed object", "kind", u.GetKind(), "namespace", u.GetNamespace(), "name", u.GetName(), "error", err.Error())
		if prev.fieldSet != (unique.Handle[string]{}) {
			// Cannot tell what changed: report it without fields, the reconcile compares.
			s.pending.Store(&pendingChange{})
		}
	default:
		if p := changeSince(prev, s, u, sets, isSecret(u)); p != nil {
			s.pending.Store(p)
		}
	}
	c.store(s)
	return s, nil
}

// snapshot takes the snapshot of an object Holdfast applied: in full, or a stub marked
// oversized over MaxSnapshotBytes, in which case sets is empty.
func (c *Compactor) snapshot(key snapshotKey, u *unstructured.Unstructured) (*Snapshot, fieldset.ManagedSets, error) {
	if c.applied != nil && keptPairsBytes(u.GetLabels())+keptPairsBytes(u.GetAnnotations()) > MaxSnapshotBytes {
		return newStub(key, u, stubOversized, c), fieldset.ManagedSets{}, nil
	}
	s := &Snapshot{
		groupVersion: key.groupVersion, kind: key.kind, namespace: key.namespace,
		deletionTimestamp: u.GetDeletionTimestamp(),
		from:              c,
	}
	secret := isSecret(u)
	sets, err := fieldset.ParseManagedFields(u, fieldset.FieldManager)
	var values strings.Builder
	var fieldSet string
	if err == nil && sets.Entry != nil {
		now := sets.ValuesOf(u, sets.Owned)
		fieldSet = sets.Entry.FieldsV1.GetRawString()
		for _, f := range now {
			values.WriteString(encodeValue(f, secret))
			values.WriteByte(0)
		}
		if sum, err := fieldset.FieldsSum(sets.Entry.APIVersion, now); err == nil {
			s.digest = sum
		}
	}
	if c.applied != nil && keptPairsBytes(u.GetLabels())+keptPairsBytes(u.GetAnnotations())+len(fieldSet)+values.Len() > MaxSnapshotBytes {
		return newStub(key, u, stubOversized, c), fieldset.ManagedSets{}, nil
	}
	s.labels, s.annotations = encodePairs(u.GetLabels()), encodePairs(u.GetAnnotations())
	if fieldSet != "" {
		s.fieldSet = intern(fieldSet)
	}
	// One allocation for the strings, none of them shared with the decoded object.
	s.setText(key.name, u.GetUID(), u.GetResourceVersion(), values.String())
	return s, sets, err
}

// store makes s the last snapshot of its object, and counts it in place of the one before.
func (c *Compactor) store(s *Snapshot) {
	c.mu.Lock()
	old := c.last[s.key()]
	c.last[s.key()] = s // the snapshot's key: its strings are the snapshot's own
	c.mu.Unlock()
	c.count(old, -1)
	c.count(s, 1)
	if old != nil && old.stub == stubForeign && s.stub != stubForeign {
		c.dropForeign()
	}
}

// count adds (sign 1) or removes (sign -1) s from the compactor's usage.
func (c *Compactor) count(s *Snapshot, sign int64) {
	if s == nil {
		return
	}
	switch s.stub {
	case stubForeign:
		c.usage.foreign.Add(sign)
	case stubOversized:
		c.usage.oversized.Add(sign)
	default:
		c.usage.full.Add(sign)
		c.usage.bytes.Add(sign * s.keptBytes())
	}
}

// forget drops s, the last snapshot of an object that is gone, unless a newer one replaced it.
func (c *Compactor) forget(s *Snapshot) {
	k := s.key()
	c.mu.Lock()
	gone := c.last[k] == s
	if gone {
		delete(c.last, k)
	}
	c.mu.Unlock()
	if gone {
		c.count(s, -1)
		if s.stub == stubForeign {
			c.dropForeign()
		}
	}
}

// Release stops counting what the compactor keeps in its Applied, for an informer that stopped.
func (c *Compactor) Release() {
	if c.applied != nil {
		c.applied.release(c)
	}
}

// keptPairsBytes is what encodePairs would keep of m, before it is built.
func keptPairsBytes(m map[string]string) int {
	n := 0
	for k, v := range m {
		if strings.HasPrefix(k, keptPrefix) {
			n += len(k) + len(v)
		}
	}
	return n
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
		return &pendingChange{fields: v.Fields, author: v.Author, live: u}
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

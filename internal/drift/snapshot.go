package drift

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"holdfast.dev/holdfast/internal/fieldset"
)

// keptPrefix selects the labels and annotations a Snapshot keeps: Holdfast's own (managed-by,
// service, owner, drift-ignore).
const keptPrefix = "holdfast.dev/"

// Snapshot is what a target cluster's cache keeps of a managed object, in place of the object:
// its identity, Holdfast's labels and annotations, and what Holdfast owns in it (the field set
// and a compact encoding of each owned value). Like every object in an informer's store it must
// not be changed once stored: its setters exist to satisfy metav1.Object, and those of fields a
// snapshot does not keep do nothing.
type Snapshot struct {
	groupVersion, kind, namespace unique.Handle[string]
	// labels and annotations are the holdfast.dev/ entries, encoded by encodePairs; interned,
	// since every object of a service carries the same ones.
	labels, annotations unique.Handle[string]
	// fieldSet is the FieldsV1 JSON of Holdfast's apply entry, interned: objects declared alike
	// share it. The zero handle means Holdfast owns nothing in the object.
	fieldSet unique.Handle[string]

	// text holds, in one allocation, the name, uid and resourceVersion, then one encoding per
	// leaf of fieldSet, in the set's order, each ended by a NUL (see encodeValue). uidAt, rvAt
	// and valuesAt are where the uid, the resourceVersion and the values start.
	text                  string
	uidAt, rvAt, valuesAt uint32
	deletionTimestamp     *metav1.Time
	// digest is fieldset.OwnedDigest of the object, as raw bytes; zero when nothing is owned.
	digest [fieldset.ObjectDigestSize]byte

	// pending is how the owned fields changed from the previous snapshot of the object, until
	// the drift handler reports it.
	pending atomic.Pointer[pendingChange]
	// from is the Compactor that made the snapshot, which forgets it when the object is deleted.
	from *Compactor
	// stub says the snapshot keeps only the object's identity (name, uid, resourceVersion,
	// deletionTimestamp), and why.
	stub stubKind
}

// stubKind says why a Snapshot is a stub.
type stubKind uint8

const (
	stubNone stubKind = iota
	// stubForeign: a labelled object no inventory of the cluster holds. The watch ignores it.
	stubForeign
	// stubOversized: an object Holdfast applied whose snapshot would keep more than
	// MaxSnapshotBytes. Every new version of it asks for a comparison with the cluster.
	stubOversized
)

// newStub returns the stub of u, made by c.
func newStub(key snapshotKey, u *unstructured.Unstructured, kind stubKind, c *Compactor) *Snapshot {
	s := &Snapshot{groupVersion: key.groupVersion, kind: key.kind, namespace: key.namespace,
		deletionTimestamp: u.GetDeletionTimestamp(), from: c, stub: kind}
	s.setText(key.name, u.GetUID(), u.GetResourceVersion(), "")
	return s
}

// IsStub reports whether the snapshot keeps only the object's identity: a labelled object no
// inventory of its cluster holds, or one over MaxSnapshotBytes.
func (s *Snapshot) IsStub() bool { return s.stub != stubNone }

// keptBytes is what the snapshot keeps beyond its fixed size: its text, and the holdfast.dev/
// labels and annotations and field set it refers to (interned, so objects declared alike share
// them; each is counted here in full).
func (s *Snapshot) keptBytes() int64 {
	return int64(len(s.text) + len(value(s.labels)) + len(value(s.annotations)) + len(value(s.fieldSet)))
}

// setText stores the snapshot's strings in one allocation.
func (s *Snapshot) setText(name string, uid types.UID, rv, values string) {
	s.text = name + string(uid) + rv + values
	s.uidAt = uint32(len(name))
	s.rvAt = s.uidAt + uint32(len(uid))
	s.valuesAt = s.rvAt + uint32(len(rv))
}

func (s *Snapshot) name() string            { return s.text[:s.uidAt] }
func (s *Snapshot) uid() types.UID          { return types.UID(s.text[s.uidAt:s.rvAt]) }
func (s *Snapshot) resourceVersion() string { return s.text[s.rvAt:s.valuesAt] }
func (s *Snapshot) values() string          { return s.text[s.valuesAt:] }

// pendingChange is a Change without its object, which the handler adds from the snapshot.
// claimed: the fields are held by Holdfast's field manager (Verdict.Claimed).
type pendingChange struct {
	fields  []FieldChange
	author  Author
	claimed bool
	// compare: the watch cannot tell what changed (a stub was involved); the status objects
	// that applied the object compare it with the cluster.
	compare bool
	// live is the whole object as the watch received it, for a drift (not a claimed change):
	// what the handler keeps for its correction (LiveCopies).
	live *unstructured.Unstructured
}

var _ metav1.Object = &Snapshot{}
var _ runtime.Object = &Snapshot{}

// OwnedDigest is fieldset.OwnedDigest of the object the snapshot was taken of: the value the
// inventory records for it.
func (s *Snapshot) OwnedDigest() string {
	if s.digest == ([fieldset.ObjectDigestSize]byte{}) {
		return ""
	}
	return fieldset.FormatObjectDigest(s.digest)
}

// Object returns the snapshot as an object with its identity, labels and annotations, and no
// content: what a Change carries.
func (s *Snapshot) Object() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(value(s.groupVersion))
	u.SetKind(value(s.kind))
	u.SetNamespace(value(s.namespace))
	u.SetName(s.name())
	u.SetUID(s.uid())
	u.SetResourceVersion(s.resourceVersion())
	if s.deletionTimestamp != nil {
		u.SetDeletionTimestamp(s.deletionTimestamp)
	}
	if l := s.GetLabels(); len(l) > 0 {
		u.SetLabels(l)
	}
	if a := s.GetAnnotations(); len(a) > 0 {
		u.SetAnnotations(a)
	}
	return u
}

// owned returns Holdfast's field set in the object (nil if none) and the encoding of each leaf,
// in the set's order.
func (s *Snapshot) owned() (*fieldpath.Set, []string, error) {
	if s.fieldSet == (unique.Handle[string]{}) {
		return nil, nil, nil
	}
	set, err := fieldset.ParseFieldSet(s.fieldSet.Value())
	if err != nil {
		return nil, nil, err
	}
	values := strings.Split(s.values(), "\x00")
	return set, values[:len(values)-1], nil
}

func intern(s string) unique.Handle[string] { return unique.Make(s) }

func value(h unique.Handle[string]) string {
	if h == (unique.Handle[string]{}) {
		return ""
	}
	return h.Value()
}

// encodePairs encodes the entries of m whose keys have keptPrefix, sorted, length-prefixed
// (annotation values may hold any character), and interns the result.
func encodePairs(m map[string]string) unique.Handle[string] {
	var keys []string
	for k := range m {
		if strings.HasPrefix(k, keptPrefix) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return unique.Handle[string]{}
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, x := range []string{k, m[k]} {
			b.WriteString(strconv.Itoa(len(x)))
			b.WriteByte(':')
			b.WriteString(x)
		}
	}
	return intern(b.String())
}

func decodePairs(h unique.Handle[string]) map[string]string {
	s := value(h)
	if s == "" {
		return nil
	}
	out := map[string]string{}
	next := func() string {
		i := strings.IndexByte(s, ':')
		n, _ := strconv.Atoi(s[:i])
		x := s[i+1 : i+1+n]
		s = s[i+1+n:]
		return x
	}
	for s != "" {
		k := next()
		out[k] = next()
	}
	return out
}

// GetObjectKind implements runtime.Object.
func (s *Snapshot) GetObjectKind() schema.ObjectKind { return s }

// DeepCopyObject implements runtime.Object. Everything a snapshot holds is immutable but the
// pending change, which the copy shares.
func (s *Snapshot) DeepCopyObject() runtime.Object {
	c := &Snapshot{
		groupVersion: s.groupVersion, kind: s.kind, namespace: s.namespace,
		labels: s.labels, annotations: s.annotations, fieldSet: s.fieldSet,
		text: s.text, uidAt: s.uidAt, rvAt: s.rvAt, valuesAt: s.valuesAt,
		deletionTimestamp: s.deletionTimestamp.DeepCopy(), digest: s.digest,
		from: s.from, stub: s.stub,
	}
	c.pending.Store(s.pending.Load())
	return c
}

// SetGroupVersionKind implements schema.ObjectKind.
func (s *Snapshot) SetGroupVersionKind(gvk schema.GroupVersionKind) {
	s.groupVersion, s.kind = intern(gvk.GroupVersion().String()), intern(gvk.Kind)
}

// GroupVersionKind implements schema.ObjectKind.
func (s *Snapshot) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(value(s.groupVersion), value(s.kind))
}

// The metav1.Object implementation: what a snapshot keeps, and zero values for the rest.

func (s *Snapshot) GetNamespace() string   { return value(s.namespace) }
func (s *Snapshot) SetNamespace(ns string) { s.namespace = intern(ns) }
func (s *Snapshot) GetName() string        { return s.name() }
func (s *Snapshot) SetName(name string) {
	s.setText(name, s.uid(), s.resourceVersion(), s.values())
}
func (s *Snapshot) GetGenerateName() string { return "" }
func (s *Snapshot) SetGenerateName(string)  {}
func (s *Snapshot) GetUID() types.UID       { return s.uid() }
func (s *Snapshot) SetUID(uid types.UID) {
	s.setText(s.name(), uid, s.resourceVersion(), s.values())
}
func (s *Snapshot) GetResourceVersion() string { return s.resourceVersion() }
func (s *Snapshot) SetResourceVersion(rv string) {
	s.setText(s.name(), s.uid(), rv, s.values())
}
func (s *Snapshot) GetGeneration() int64                          { return 0 }
func (s *Snapshot) SetGeneration(int64)                           {}
func (s *Snapshot) GetSelfLink() string                           { return "" }
func (s *Snapshot) SetSelfLink(string)                            {}
func (s *Snapshot) GetCreationTimestamp() metav1.Time             { return metav1.Time{} }
func (s *Snapshot) SetCreationTimestamp(metav1.Time)              {}
func (s *Snapshot) GetDeletionTimestamp() *metav1.Time            { return s.deletionTimestamp }
func (s *Snapshot) SetDeletionTimestamp(t *metav1.Time)           { s.deletionTimestamp = t }
func (s *Snapshot) GetDeletionGracePeriodSeconds() *int64         { return nil }
func (s *Snapshot) SetDeletionGracePeriodSeconds(*int64)          {}
func (s *Snapshot) GetLabels() map[string]string                  { return decodePairs(s.labels) }
func (s *Snapshot) SetLabels(l map[string]string)                 { s.labels = encodePairs(l) }
func (s *Snapshot) GetAnnotations() map[string]string             { return decodePairs(s.annotations) }
func (s *Snapshot) SetAnnotations(a map[string]string)            { s.annotations = encodePairs(a) }
func (s *Snapshot) GetFinalizers() []string                       { return nil }
func (s *Snapshot) SetFinalizers([]string)                        {}
func (s *Snapshot) GetOwnerReferences() []metav1.OwnerReference   { return nil }
func (s *Snapshot) SetOwnerReferences([]metav1.OwnerReference)    {}
func (s *Snapshot) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }
func (s *Snapshot) SetManagedFields([]metav1.ManagedFieldsEntry)  {}

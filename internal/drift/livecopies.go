package drift

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"
)

// DefaultLiveCopyBytes bounds what LiveCopies keeps: 16 MiB, thousands of drifted objects of
// ordinary size awaiting their correction.
const DefaultLiveCopyBytes = 16 << 20

// maxLiveCopies bounds the number of objects LiveCopies keeps, whatever their size.
const maxLiveCopies = 4096

// LiveCopies keeps, for each managed object whose last change a watch saw was a drift, the whole
// object as the watch received it, until its correction takes it (Take): the correction then
// applies over it instead of reading the object again, which is the one round trip that
// separated a correction from the least any corrector does (one watch event, one apply).
//
// A copy is only ever the newest version the watch saw: any later event of the object (an
// update that is no drift, Holdfast's own write, a deletion, a change the watch cannot judge)
// drops it, so whoever takes a copy knows nothing newer was seen. It is a cache: a copy that
// is missing (dropped, over the bounds, taken already) means the object is read from the
// cluster, as before. The least recently kept go first past DefaultLiveCopyBytes or
// maxLiveCopies. A nil *LiveCopies keeps nothing. It is safe for concurrent use.
type LiveCopies struct {
	mu       sync.Mutex
	maxBytes int64
	bytes    int64
	kept     *lru.Cache // liveCopyKey → *liveCopy
}

type liveCopyKey struct {
	cluster                      types.NamespacedName
	group, kind, namespace, name string
}

type liveCopy struct {
	obj  *unstructured.Unstructured
	size int64
}

// NewLiveCopies keeps at most maxBytes of objects (DefaultLiveCopyBytes when not positive).
func NewLiveCopies(maxBytes int64) *LiveCopies {
	if maxBytes <= 0 {
		maxBytes = DefaultLiveCopyBytes
	}
	l := &LiveCopies{maxBytes: maxBytes}
	l.kept = lru.NewWithEvictionFunc(maxLiveCopies, func(_ lru.Key, v any) { l.bytes -= v.(*liveCopy).size })
	return l
}

func copyKeyOf(cluster types.NamespacedName, gvk schema.GroupVersionKind, namespace, name string) liveCopyKey {
	return liveCopyKey{cluster: cluster, group: gvk.Group, kind: gvk.Kind, namespace: namespace, name: name}
}

// keep makes u the copy of its object on cluster, in place of any older one. u must not be
// changed afterwards by anyone but the one who takes it.
func (l *LiveCopies) keep(cluster types.NamespacedName, u *unstructured.Unstructured) {
	if l == nil {
		return
	}
	key := copyKeyOf(cluster, u.GroupVersionKind(), u.GetNamespace(), u.GetName())
	size := approxSize(u.Object)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kept.Remove(key)
	if size > l.maxBytes {
		return
	}
	l.kept.Add(key, &liveCopy{obj: u, size: size})
	l.bytes += size
	for l.bytes > l.maxBytes {
		l.kept.RemoveOldest()
	}
}

// drop forgets the copy of obj's object on cluster: the watch saw a newer version of it.
func (l *LiveCopies) drop(cluster types.NamespacedName, obj interface {
	GroupVersionKind() schema.GroupVersionKind
	GetNamespace() string
	GetName() string
}) {
	if l == nil {
		return
	}
	key := copyKeyOf(cluster, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName())
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kept.Remove(key)
}

// Take returns and forgets the copy of an object on cluster, if one is kept and of version
// gvk.Version: the newest version of it the watch saw, which drifted. The caller owns it.
func (l *LiveCopies) Take(cluster types.NamespacedName, gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	if l == nil {
		return nil
	}
	key := copyKeyOf(cluster, gvk, namespace, name)
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.kept.Get(key)
	if !ok {
		return nil
	}
	l.kept.Remove(key)
	u := v.(*liveCopy).obj
	if u.GroupVersionKind() != gvk {
		return nil
	}
	return u
}

// approxSize is about the bytes v takes as JSON: its strings, keys and a few bytes per value.
func approxSize(v any) int64 {
	switch t := v.(type) {
	case map[string]any:
		n := int64(2)
		for k, e := range t {
			n += int64(len(k)) + 4 + approxSize(e)
		}
		return n
	case []any:
		n := int64(2)
		for _, e := range t {
			n += 1 + approxSize(e)
		}
		return n
	case string:
		return int64(len(t)) + 2
	default:
		return 8
	}
}

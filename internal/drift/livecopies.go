package drift

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"holdfast.dev/holdfast/internal/sizedlru"
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
	kept *sizedlru.Cache[liveCopyKey, *unstructured.Unstructured]
}

type liveCopyKey struct {
	cluster                      types.NamespacedName
	group, kind, namespace, name string
}

// NewLiveCopies keeps at most maxBytes of objects (DefaultLiveCopyBytes when not positive).
func NewLiveCopies(maxBytes int64) *LiveCopies {
	if maxBytes <= 0 {
		maxBytes = DefaultLiveCopyBytes
	}
	return &LiveCopies{kept: sizedlru.New[liveCopyKey, *unstructured.Unstructured](maxLiveCopies, maxBytes)}
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
	l.kept.Add(copyKeyOf(cluster, u.GroupVersionKind(), u.GetNamespace(), u.GetName()), u, approxSize(u.Object))
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
	l.kept.Remove(copyKeyOf(cluster, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName()))
}

// Take returns and forgets the copy of an object on cluster, if one is kept and of version
// gvk.Version: the newest version of it the watch saw, which drifted. The caller owns it.
func (l *LiveCopies) Take(cluster types.NamespacedName, gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	if l == nil {
		return nil
	}
	u, ok := l.kept.Take(copyKeyOf(cluster, gvk, namespace, name))
	if !ok || u.GroupVersionKind() != gvk {
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

package drift

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"holdfast.dev/holdfast/internal/apply"
)

// Change is a managed object that changed in a way that matters.
type Change struct {
	// Object is the object after the change (before it, for a deletion). From a compact cache
	// it holds only the identity, resourceVersion, deletionTimestamp and the holdfast.dev/
	// labels and annotations (see Snapshot.Object); read the live object for more.
	Object *unstructured.Unstructured
	// Deleted is true when the object is gone.
	Deleted bool
	// Fields are the changed fields Holdfast applied (none for a deletion).
	Fields []FieldChange
	// Author made the change, as far as managedFields tell (unknown for a deletion).
	Author Author
}

// Watches keeps one informer handler per (cluster cache, kind). It is safe for concurrent use.
type Watches struct {
	// OnChange is called, from informer goroutines, for every change that matters. It must not
	// block.
	OnChange func(cluster types.NamespacedName, c Change)

	mu      sync.Mutex
	watched map[watchKey]cache.Informer
}

type watchKey struct {
	cache cache.Cache
	gvk   schema.GroupVersionKind
}

// Ensure makes sure changes to objects of gvk in the cluster behind c are reported. It does not
// wait for the informer to sync: events of objects that exist already are harmless (their owned
// fields are as applied).
func (w *Watches) Ensure(ctx context.Context, cluster types.NamespacedName, c cache.Cache, gvk schema.GroupVersionKind) error {
	k := watchKey{cache: c, gvk: gvk}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watched == nil {
		w.watched = map[watchKey]cache.Informer{}
	}
	if _, ok := w.watched[k]; ok {
		return nil
	}
	// A cache that stopped (its connection was closed or replaced) is held by nothing else:
	// let it go with everything its informers stored.
	for k, inf := range w.watched {
		if inf.IsStopped() {
			delete(w.watched, k)
		}
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("watching %s on cluster %s: %w", gvk, cluster, err)
	}
	if _, err := inf.AddEventHandler(w.handler(cluster)); err != nil {
		return fmt.Errorf("watching %s on cluster %s: %w", gvk, cluster, err)
	}
	w.watched[k] = inf
	ctrl.LoggerFrom(ctx).V(1).Info("Watching managed objects", "cluster", cluster.String(), "kind", gvk.String())
	return nil
}

// handler reports the changes of one cluster's objects. With a Compactor as the cache's
// transform, the informer holds Snapshots, each carrying the change that made it; without one,
// it holds whole objects and the change is computed here.
func (w *Watches) handler(cluster types.NamespacedName) toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			switch n := newObj.(type) {
			case *Snapshot:
				if p := n.pending.Swap(nil); p != nil && oldObj != newObj {
					w.OnChange(cluster, Change{Object: n.Object(), Fields: p.fields, Author: p.author})
				}
			case *unstructured.Unstructured:
				if o, ok := oldObj.(*unstructured.Unstructured); ok {
					if c, changed := changeOf(o, n); changed {
						w.OnChange(cluster, c)
					}
				}
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			switch o := obj.(type) {
			case *Snapshot:
				if o.from != nil {
					o.from.forget(o)
				}
				w.OnChange(cluster, Change{Object: o.Object(), Deleted: true})
			case *unstructured.Unstructured:
				w.OnChange(cluster, Change{Object: o, Deleted: true})
			}
		},
	}
}

// changeOf is the change from o to n, two whole objects, if it matters.
func changeOf(o, n *unstructured.Unstructured) (Change, bool) {
	if !OwnedChanged(o, n) {
		return Change{}, false
	}
	fields, err := Diff(o, n)
	if err != nil {
		ctrl.Log.WithName("drift").V(1).Info("Cannot diff a changed object", "error", err.Error())
	} else if len(fields) == 0 {
		// No field Holdfast owned before has another value: Holdfast took fields back (its own
		// correction), which is not drift.
		return Change{}, false
	}
	return Change{Object: n, Fields: fields, Author: AuthorOf(n, fields)}, true
}

// Forget drops the record of handlers on a cache that is gone, so a rebuilt connection gets new
// ones. Ensure also drops those of caches that stopped, the next time it adds a handler.
func (w *Watches) Forget(c cache.Cache) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.watched {
		if k.cache == c {
			delete(w.watched, k)
		}
	}
}

// OwnedChanged reports whether an update changed what Holdfast owns in the object: the values of
// its server-side-apply fields, or the ownership marks Holdfast relies on. Other managers'
// fields, status and metadata churn do not count.
func OwnedChanged(oldObj, newObj *unstructured.Unstructured) bool {
	if oldObj.GetResourceVersion() == newObj.GetResourceVersion() {
		return false // a resync
	}
	before, err1 := apply.OwnedDigest(oldObj, apply.FieldManager)
	after, err2 := apply.OwnedDigest(newObj, apply.FieldManager)
	if err1 != nil || err2 != nil {
		return true // cannot tell: let the reconcile decide, it compares with the inventory
	}
	return before != after
}

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
	// Object is the object after the change (before it, for a deletion).
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
	watched map[watchKey]bool
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
		w.watched = map[watchKey]bool{}
	}
	if w.watched[k] {
		return nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("watching %s on cluster %s: %w", gvk, cluster, err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*unstructured.Unstructured)
			n, ok2 := newObj.(*unstructured.Unstructured)
			if !ok1 || !ok2 || !OwnedChanged(o, n) {
				return
			}
			fields, err := Diff(o, n)
			if err != nil {
				ctrl.Log.WithName("drift").V(1).Info("Cannot diff a changed object", "error", err.Error())
			} else if len(fields) == 0 {
				// No field Holdfast owned before has another value: Holdfast took fields back
				// (its own correction), which is not drift.
				return
			}
			w.OnChange(cluster, Change{Object: n, Fields: fields, Author: AuthorOf(n, fields)})
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				w.OnChange(cluster, Change{Object: u, Deleted: true})
			}
		},
	}); err != nil {
		return fmt.Errorf("watching %s on cluster %s: %w", gvk, cluster, err)
	}
	w.watched[k] = true
	ctrl.LoggerFrom(ctx).V(1).Info("Watching managed objects", "cluster", cluster.String(), "kind", gvk.String())
	return nil
}

// Forget drops the record of handlers on a cache that is gone, so a rebuilt connection gets new ones.
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

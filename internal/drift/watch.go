package drift

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// Change is a managed object that drifted, as a watch saw it.
type Change struct {
	// Object is the object after the change (before it, for a deletion). It holds only the
	// identity, resourceVersion, deletionTimestamp and the holdfast.dev/ labels and annotations
	// (see Snapshot.Object); read the live object for more.
	Object *unstructured.Unstructured
	// Verdict is what changed and who changed it (see Decide); Deleted for a deletion. Fields
	// may be empty when the new version's managedFields could not be read: the reconcile then
	// compares. A change Holdfast's field manager holds comes as Claimed, not Drifted: the
	// receiver asks OwnWrites whether Holdfast made it (Verdict.ResolveClaim).
	Verdict
	// OwnedDigest is the owned digest of the object after the change (Snapshot.OwnedDigest).
	OwnedDigest string
	// Compare: the watch cannot tell whether the object drifted (its snapshot, before or after,
	// is a stub: see Applied). Object holds only its identity; the status objects that applied
	// it (Applied.Owners) must compare it with the cluster. Verdict is empty.
	Compare bool
}

// Watches keeps one informer handler per (cluster cache, kind). It is safe for concurrent use.
type Watches struct {
	// OnChange is called, from informer goroutines, for every change that matters, claimed
	// changes included (see Change). It must not block.
	OnChange func(cluster types.NamespacedName, c Change)
	// OnUpdate, if set, is called, from informer goroutines, for every other update of a
	// watched object: changes to what Holdfast does not own, such as the status its controllers
	// write, from which its health follows, or someone putting back a value Holdfast lost to a
	// drift; and for every object that appears (created, or listed), such as one someone
	// re-created after its deletion was reported. obj is as Change.Object. It must not block.
	OnUpdate func(cluster types.NamespacedName, obj *unstructured.Unstructured)
	// OnSynced, if set, is called once a new handler has seen every object of its kind that
	// existed when it started (from a goroutine of its own). A change made between the apply
	// and that first list (a restart, a new kind) reaches no handler as a change: whoever uses
	// the watch compares with the cluster then.
	OnSynced func(cluster types.NamespacedName)
	// Applied, if set, makes the informers of EnsureIn keep full snapshots of the objects
	// Holdfast applied only, as the caches' transform does (Applied.Transform).
	Applied *Applied
	// Live, if set, keeps the whole object of each drift until its correction takes it, and
	// drops it at any later event of the object (see LiveCopies).
	Live *LiveCopies

	mu      sync.Mutex
	watched map[watchKey]cache.Informer
	// namespaced are the informers of EnsureIn.
	namespaced map[namespacedKey]namespacedInformer
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
	reg, err := inf.AddEventHandler(w.handler(cluster))
	if err != nil {
		return fmt.Errorf("watching %s on cluster %s: %w", gvk, cluster, err)
	}
	go w.whenSynced(cluster, reg, inf.IsStopped)
	w.watched[k] = inf
	ctrl.LoggerFrom(ctx).V(1).Info("Watching managed objects", "cluster", cluster.String(), "kind", gvk.String())
	return nil
}

// handler reports the changes of one cluster's objects. The cache's transform is a Compactor,
// so the informer holds Snapshots, each carrying the change that made it.
func (w *Watches) handler(cluster types.NamespacedName) toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			n, ok := obj.(*Snapshot)
			if !ok {
				return
			}
			w.Live.drop(cluster, n)
			if !n.IsStub() && w.OnUpdate != nil {
				w.OnUpdate(cluster, n.Object())
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			if n, ok := newObj.(*Snapshot); ok && oldObj != newObj {
				p := n.pending.Swap(nil)
				// Kept before OnChange asks for the correction that takes it.
				if p != nil && !p.compare && !p.claimed && p.live != nil {
					w.Live.keep(cluster, p.live)
				} else {
					w.Live.drop(cluster, n)
				}
				switch {
				case p != nil && p.compare:
					w.OnChange(cluster, Change{Object: n.Object(), Compare: true})
				case p != nil:
					v := Verdict{Drifted: true, Fields: p.fields, Author: p.author}
					if p.claimed {
						v = Verdict{Claimed: p.fields, Author: p.author}
					}
					w.OnChange(cluster, Change{Object: n.Object(), Verdict: v, OwnedDigest: n.OwnedDigest()})
				case n.IsStub():
				case w.OnUpdate != nil:
					w.OnUpdate(cluster, n.Object())
				}
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			o, ok := obj.(*Snapshot)
			if !ok {
				return
			}
			w.Live.drop(cluster, o)
			if o.from != nil {
				o.from.forget(o)
			}
			switch {
			case !o.IsStub():
				w.OnChange(cluster, Change{Object: o.Object(), Verdict: Decide(o, nil, nil)})
			case o.stub == stubOversized || (o.from != nil && o.from.registered(o.key())):
				// Holdfast's, but its stub cannot say: the reconcile compares, and finds it gone.
				w.OnChange(cluster, Change{Object: o.Object(), Compare: true})
			}
		},
	}
}

// Forget drops the record of handlers on a cache that is gone, so a rebuilt connection gets new
// ones and the stopped informers, with every object they stored, are let go at once. The
// ClusterServiceStatus controller calls it for each connection the fleet registry closes
// (fleet.Registry.OnClosed). Ensure also drops those of caches that stopped, the next time it
// adds a handler.
func (w *Watches) Forget(c cache.Cache) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.watched {
		if k.cache == c {
			delete(w.watched, k)
		}
	}
	w.forgetNamespaced(c)
}

// syncPoll is how often whenSynced looks whether a handler has synced.
const syncPoll = 50 * time.Millisecond

// whenSynced calls OnSynced once reg has synced, unless its informer stops first.
func (w *Watches) whenSynced(cluster types.NamespacedName, reg toolscache.ResourceEventHandlerRegistration, stopped func() bool) {
	if w.OnSynced == nil {
		return
	}
	for !reg.HasSynced() {
		if stopped() {
			return
		}
		time.Sleep(syncPoll)
	}
	w.OnSynced(cluster)
}

package clusterservicestatus

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"

	"holdfast.dev/holdfast/internal/rendercache"
)

// part is one kind of thing memory holds per status object, with the name of the status
// object's Cluster (in its namespace) for forgetCluster, under a lock of its own. Nothing is
// held for a status object whose value was dropped: a part holds only what it was given.
type part[T any] struct {
	mu   sync.Mutex
	held map[types.NamespacedName]heldFor[T]
	// bound, when above 0, is how many status objects the part holds something for at most:
	// the one bound of what the drift watches and map functions, which run ahead of reconciles,
	// can make memory hold (see maxPendingStatuses).
	bound int
}

// heldFor is what a part holds for one status object.
type heldFor[T any] struct {
	cluster string
	v       T
}

func newPart[T any](bound int) *part[T] {
	return &part[T]{held: map[types.NamespacedName]heldFor[T]{}, bound: bound}
}

// get returns what the part holds for key, and whether it holds anything.
func (p *part[T]) get(key types.NamespacedName) (T, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.held[key]
	return h.v, ok
}

// change replaces what the part holds for key (the zero value if nothing) with what f makes of
// it, or drops it when f says not to keep it. A status object the part holds nothing for is
// refused when the part is at its bound, unless force: change then reports false and f is not
// called.
func (p *part[T]) change(key types.NamespacedName, cluster string, force bool, f func(T) (T, bool)) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.held[key]
	if !ok && !force && p.bound > 0 && len(p.held) >= p.bound {
		return false
	}
	v, keep := f(h.v)
	if !keep {
		delete(p.held, key)
		return true
	}
	p.held[key] = heldFor[T]{cluster: cluster, v: v}
	return true
}

// put replaces what the part holds for key with v, or drops it when !keep; never refused.
func (p *part[T]) put(key types.NamespacedName, cluster string, v T, keep bool) {
	p.change(key, cluster, true, func(T) (T, bool) { return v, keep })
}

// take returns and drops what the part holds for key.
func (p *part[T]) take(key types.NamespacedName) (T, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.held[key]
	delete(p.held, key)
	return h.v, ok
}

// forget drops what the part holds for key.
func (p *part[T]) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.held, key)
}

// forgetCluster drops what the part holds for the status objects of cluster, and returns them.
func (p *part[T]) forgetCluster(cluster types.NamespacedName) []types.NamespacedName {
	p.mu.Lock()
	defer p.mu.Unlock()
	var gone []types.NamespacedName
	for key, h := range p.held {
		if key.Namespace == cluster.Namespace && h.cluster == cluster.Name {
			delete(p.held, key)
			gone = append(gone, key)
		}
	}
	return gone
}

// len is how many status objects the part holds something for.
func (p *part[T]) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.held)
}

// declarationStore is the part of memory that holds what each service of a status object
// declared at its last render (rendercache.Declaration, compressed), bounded by bytes: over the
// bound, the status objects whose declarations were used least recently lose them.
type declarationStore struct {
	mu   sync.Mutex
	held *part[map[string]*rendercache.Declaration]
	// used orders the status objects by their declarations' last use, each with the bytes they
	// hold; bytes is their sum, at most max. Its eviction function drops a status object's
	// declarations; it runs, like every call to used, with mu held.
	used       *lru.Cache
	bytes, max int
}

func newDeclarationStore(max int) *declarationStore {
	d := &declarationStore{held: newPart[map[string]*rendercache.Declaration](0), max: max}
	d.used = lru.NewWithEvictionFunc(0, d.evicted)
	return d
}

// evicted is used's eviction function: the declarations of key are gone.
func (d *declarationStore) evicted(key lru.Key, size any) {
	d.bytes -= size.(int)
	d.held.forget(key.(types.NamespacedName))
}

// set replaces the declarations of key, and drops those used least recently while all of them
// hold more than max bytes. Declarations over the bound alone are not kept.
func (d *declarationStore) set(key types.NamespacedName, cluster string, declared map[string]*rendercache.Declaration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.used.Remove(key)
	size := 0
	for _, one := range declared {
		size += one.Size()
	}
	if len(declared) > 0 && size <= d.max {
		d.held.put(key, cluster, declared, true)
		d.used.Add(key, size)
		d.bytes += size
	}
	for d.bytes > d.max && d.used.Len() > 0 {
		d.used.RemoveOldest()
	}
}

// get returns the declarations of key (nil if none), a use that keeps them longer; the map must
// not be changed.
func (d *declarationStore) get(key types.NamespacedName) map[string]*rendercache.Declaration {
	d.mu.Lock()
	defer d.mu.Unlock()
	declared, ok := d.held.get(key)
	if ok {
		d.used.Get(key)
	}
	return declared
}

// forget drops the declarations of key.
func (d *declarationStore) forget(key types.NamespacedName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.used.Remove(key)
}

// forgetCluster drops the declarations of the status objects of cluster, and returns them.
func (d *declarationStore) forgetCluster(cluster types.NamespacedName) []types.NamespacedName {
	d.mu.Lock()
	defer d.mu.Unlock()
	gone := d.held.forgetCluster(cluster)
	for _, key := range gone {
		d.used.Remove(key) // their bytes
	}
	return gone
}

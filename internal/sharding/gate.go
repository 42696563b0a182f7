package sharding

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// gate admits the reconciles of the clusters the replica acts on and keeps track of the ones
// running, so that the replica publishes a view that hands a cluster over only once nothing of
// its own still works on that cluster. It is safe for concurrent use.
type gate struct {
	mu      sync.Mutex
	acting  Ownership
	flights map[*flight]struct{}
	// turnedAway are the clusters whose reconciles the gate refused or cancelled since the last
	// takeTurnedAway: if the replica acts on one of them again without having let it go in
	// between (a narrowing undone before settle ran), nothing else brings that work back.
	turnedAway map[types.NamespacedName]struct{}
}

// flight is one admitted reconcile.
type flight struct {
	cluster types.NamespacedName
	cancel  context.CancelFunc
}

// owns reports whether the replica acts on cluster.
func (g *gate) owns(cluster types.NamespacedName) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.acting.Owns(cluster.String())
}

// begin admits a reconcile of cluster if the replica acts on it. The returned context ends when
// the replica stops acting on the cluster; done must be called when the reconcile returns.
func (g *gate) begin(ctx context.Context, cluster types.NamespacedName) (context.Context, func(), bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.acting.Owns(cluster.String()) {
		g.turnAway(cluster)
		return ctx, func() {}, false
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &flight{cluster: cluster, cancel: cancel}
	if g.flights == nil {
		g.flights = map[*flight]struct{}{}
	}
	g.flights[f] = struct{}{}
	return ctx, func() {
		cancel()
		g.mu.Lock()
		delete(g.flights, f)
		g.mu.Unlock()
	}, true
}

// set replaces what the replica acts on and cancels the reconciles of the clusters it no longer
// acts on: a write they have not sent yet is not sent.
func (g *gate) set(o Ownership) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.acting = o
	for f := range g.flights {
		if !o.Owns(f.cluster.String()) {
			f.cancel()
			g.turnAway(f.cluster)
		}
	}
}

// drained reports whether no reconcile runs on a cluster the replica no longer acts on.
func (g *gate) drained() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for f := range g.flights {
		if !g.acting.Owns(f.cluster.String()) {
			return false
		}
	}
	return true
}

// busy reports whether a reconcile runs on cluster.
func (g *gate) busy(cluster types.NamespacedName) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for f := range g.flights {
		if f.cluster == cluster {
			return true
		}
	}
	return false
}

// turnAway records that a reconcile of cluster was refused or cancelled; g.mu is held.
func (g *gate) turnAway(cluster types.NamespacedName) {
	if g.turnedAway == nil {
		g.turnedAway = map[types.NamespacedName]struct{}{}
	}
	g.turnedAway[cluster] = struct{}{}
}

// takeTurnedAway returns the clusters whose reconciles were refused or cancelled since the last
// call, and forgets them.
func (g *gate) takeTurnedAway() []types.NamespacedName {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]types.NamespacedName, 0, len(g.turnedAway))
	for k := range g.turnedAway {
		out = append(out, k)
	}
	g.turnedAway = nil
	return out
}

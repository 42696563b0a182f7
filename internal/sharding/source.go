package sharding

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Predicate passes the events of objects whose cluster this replica handles, and of objects
// clusterOf names no cluster for. A nil Coordinator passes everything. Reconcile still calls
// Begin: the replica may let the cluster go between the event and the reconcile.
func (c *Coordinator) Predicate(clusterOf func(client.Object) (types.NamespacedName, bool)) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		if c == nil {
			return true
		}
		k, ok := clusterOf(o)
		return !ok || c.Owns(k)
	})
}

// Source queues, for every cluster the replica gains, the requests requestsOf maps it to, each
// after a random delay within the rebalance spread: a replica taking over many clusters at once
// does not start them all in the same instant. The events of the objects of a cluster the
// replica did not handle were dropped (Predicate); this brings them back.
func (c *Coordinator) Source(requestsOf func(context.Context, types.NamespacedName) []reconcile.Request) source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		c.OnGained(func(clusters []types.NamespacedName) {
			for _, k := range clusters {
				for _, req := range requestsOf(ctx, k) {
					q.AddAfter(req, c.jitter(len(clusters)))
				}
			}
		})
		return nil
	})
}

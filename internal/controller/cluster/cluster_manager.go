package cluster

import (
	"context"
	"fmt"
	"maps"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/agentaccess"
)

// secretRefIndex indexes Clusters by the name of their kubeconfig Secret.
const secretRefIndex = ".spec.kubeconfigSecretRef.name"

// SetupWithManager registers the reconciler, its index and its watches. Secrets are watched as
// metadata only: the hub's Secret data never sits in the controller's cache.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.ProbeInterval <= 0 {
		r.ProbeInterval = DefaultProbeInterval
	}
	if r.ProbeRetryInterval <= 0 {
		r.ProbeRetryInterval = DefaultProbeRetryInterval
	}
	if r.ConnectionGrace <= 0 {
		r.ConnectionGrace = DefaultConnectionGrace
	}
	if r.StatusHeartbeat <= 0 {
		r.StatusHeartbeat = DefaultStatusHeartbeat
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &holdfastv1.Cluster{}, secretRefIndex, func(o client.Object) []string {
		if c := o.(*holdfastv1.Cluster); !c.Pull() {
			return []string{c.Spec.KubeconfigSecretRef.Name}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing Clusters by kubeconfig Secret: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &holdfastv1.Cluster{}, clusterIDIndex, indexClusterID); err != nil {
		return fmt.Errorf("indexing Clusters by cluster ID: %w", err)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&holdfastv1.Cluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{}, r.Shard.Predicate(itself))).
		Watches(&holdfastv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.sameCluster), builder.WithPredicates(clusterIDChanged)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.clustersForSecret), builder.OnlyMetadata).
		// A Pull cluster's agent reports through its Lease; another Cluster coming into or
		// leaving its namespace decides whether its agent has access.
		Watches(&coordinationv1.Lease{}, handler.EnqueueRequestsFromMapFunc(agentOf), builder.WithPredicates(leaseChanged(r.ConnectionGrace))).
		Watches(&corev1.ServiceAccount{}, handler.EnqueueRequestsFromMapFunc(agentOf)).
		Watches(&holdfastv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.pullClustersBeside), builder.WithPredicates(createdOrDeleted))
	if r.Shard != nil {
		// A Cluster handed over to this replica is probed anew: its events went to another.
		b = b.WatchesRawSource(r.Shard.Source(func(_ context.Context, k types.NamespacedName) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: k}}
		}))
	}
	return b.WithOptions(opts).
		Named("cluster").
		Complete(r)
}

// leaseChanged passes the Lease events that change what the hub says of a Pull cluster: a Lease
// created or deleted, a new report (its annotations and labels), a new holder, or a renewal
// after a silence of grace or more (the agent is back). A renewal alone does not: a thousand
// agents renewing every 10 s would be a hundred reconciles a second that change nothing. The
// reconcile looks again when the Lease would expire (requeueAfter).
func leaseChanged(grace time.Duration) predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(*coordinationv1.Lease)
		renewed, okNew := e.ObjectNew.(*coordinationv1.Lease)
		if !okOld || !okNew {
			return true
		}
		if !maps.Equal(old.Annotations, renewed.Annotations) || !maps.Equal(old.Labels, renewed.Labels) ||
			!equality.Semantic.DeepEqual(old.Spec.HolderIdentity, renewed.Spec.HolderIdentity) {
			return true
		}
		if old.Spec.RenewTime == nil || renewed.Spec.RenewTime == nil {
			return true
		}
		return renewed.Spec.RenewTime.Sub(old.Spec.RenewTime.Time) >= grace
	}}
}

// itself is the Cluster a Cluster belongs to, for sharding.
func itself(o client.Object) (types.NamespacedName, bool) { return client.ObjectKeyFromObject(o), true }

// clustersForSecret maps a Secret to the Clusters whose kubeconfig it holds.
func (r *Reconciler) clustersForSecret(ctx context.Context, secret client.Object) []reconcile.Request {
	list := &holdfastv1.ClusterList{}
	if err := r.Client.List(ctx, list, client.InNamespace(secret.GetNamespace()), client.MatchingFields{secretRefIndex: secret.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Clusters for Secret failed", "secret", client.ObjectKeyFromObject(secret))
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

// agentOf maps an object of a Pull cluster's agent (package agentaccess) to its Cluster.
func agentOf(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[agentaccess.Label]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// pullClustersBeside maps a Cluster to the other, Pull, Clusters of its namespace.
func (r *Reconciler) pullClustersBeside(ctx context.Context, o client.Object) []reconcile.Request {
	list := &holdfastv1.ClusterList{}
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Clusters beside a Cluster failed", "cluster", client.ObjectKeyFromObject(o))
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if c := &list.Items[i]; c.Name != o.GetName() && c.Pull() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(c)})
		}
	}
	return reqs
}

// createdOrDeleted passes the creation and deletion of an object, not its updates.
var createdOrDeleted = predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }}

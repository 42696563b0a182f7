package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/sharding"
)

// inClusterNamespace is where a pod's service account token says the pod runs.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// newShard builds this replica's sharding coordinator (Options.Shard) and adds it to the
// manager. Its member Lease lives beside the leader election one.
func newShard(mgr ctrl.Manager, registry *fleet.Registry, opts Options) (*sharding.Coordinator, error) {
	if !opts.LeaderElection {
		return nil, errors.New("--shard needs --leader-elect: the controllers that create and delete status objects must still run on one replica")
	}
	ns := opts.LeaderElectionNamespace
	if ns == "" {
		b, err := os.ReadFile(inClusterNamespace)
		if err != nil {
			return nil, fmt.Errorf("--shard outside a cluster needs --leader-election-namespace: %w", err)
		}
		ns = strings.TrimSpace(string(b))
	}
	id := opts.ShardID
	if id == "" {
		var err error
		if id, err = os.Hostname(); err != nil {
			return nil, fmt.Errorf("--shard-id not set and no host name: %w", err)
		}
	}
	cache := mgr.GetClient()
	shard, err := sharding.New(sharding.Options{
		Identity:    id,
		Namespace:   ns,
		Group:       opts.LeaderElectionID,
		Reader:      mgr.GetAPIReader(),
		Writer:      mgr.GetClient(),
		Connections: registry,
		// Another replica reports the cluster's health and drift now: no stale gauge of ours
		// adds to its.
		OnReleased: func(k types.NamespacedName) {
			metrics.ForgetClusterHealth(k.Namespace, k.Name)
			metrics.ForgetCluster(k.String())
		},
		LeaseDuration:   opts.ShardLeaseDuration,
		KeepLeaseOnStop: opts.ShardKeepLeaseOnStop,
		Clusters: func(ctx context.Context) ([]types.NamespacedName, error) {
			list := &holdfastv1.ClusterList{}
			if err := cache.List(ctx, list); err != nil {
				return nil, fmt.Errorf("listing Clusters: %w", err)
			}
			keys := make([]types.NamespacedName, 0, len(list.Items))
			for i := range list.Items {
				keys = append(keys, client.ObjectKeyFromObject(&list.Items[i]))
			}
			return keys, nil
		},
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(shard); err != nil {
		return nil, fmt.Errorf("adding the sharding coordinator: %w", err)
	}
	return shard, nil
}

// everywhere runs a runnable on every replica, not only on the leader: what the per-cluster
// controllers use (the fleet registry, the notification dispatcher) when they run on every
// replica.
type everywhere struct{ manager.Runnable }

func (everywhere) NeedLeaderElection() bool { return false }

// runnable is r, on every replica when sharding.
func runnable(r manager.Runnable, sharded bool) manager.Runnable {
	if sharded {
		return everywhere{r}
	}
	return r
}

package measure

import (
	"context"
	"fmt"
	"time"

	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
)

// Replica is one controller manager a Harness started: the controller (StartController) or one
// of several sharded replicas in this process (StartReplica).
type Replica struct {
	// ID is the replica's shard identity; empty for an unsharded controller.
	ID string
	// Counter counts this replica's requests alone (Harness.Counter counts every manager's);
	// nil for StartController's.
	Counter  *RequestCounter
	Registry *fleet.Registry
	// Started is when its manager started.
	Started time.Time

	cancel context.CancelFunc
	done   chan error
}

// StartReplica builds and starts one controller replica sharing the clusters with the others
// started so (controller.Options.Shard, identity id): leader election in the fleet's namespace,
// where the member Leases live too, and SkipNameValidation, so that several run in this process.
// Its requests are counted by Harness.Counter and by its own Counter; opts.TargetTransport, if
// set, wraps its target transports outside the counting ones.
func (h *Harness) StartReplica(ctx context.Context, id string, hubQPS float32, opts controller.Options) (*Replica, error) {
	opts.Shard, opts.ShardID = true, id
	opts.LeaderElection, opts.SkipNameValidation = true, true
	if opts.LeaderElectionNamespace == "" {
		opts.LeaderElectionNamespace = h.Fleet.Namespace
	}
	r, err := h.startManager(ctx, hubQPS, opts, NewRequestCounter())
	if err != nil {
		return nil, fmt.Errorf("starting replica %s: %w", id, err)
	}
	if h.Started.IsZero() {
		h.Started = r.Started
	}
	return r, nil
}

// Stop cancels the replica's manager and waits until it returned; it does nothing the second
// time. A replica started with controller.Options.ShardKeepLeaseOnStop leaves its member Lease
// to expire, as a killed one does.
func (r *Replica) Stop() error {
	if r.cancel == nil {
		return nil
	}
	r.cancel()
	r.cancel = nil
	if err := <-r.done; err != nil {
		name := "the controller"
		if r.ID != "" {
			name = "replica " + r.ID
		}
		return fmt.Errorf("running %s: %w", name, err)
	}
	return nil
}

package sharding

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"holdfast.dev/holdfast/internal/metrics"
)

// Defaults of Options.
const (
	// DefaultLeaseDuration is how long a member Lease that stopped changing counts as live: a
	// killed replica's clusters are handled by the others about this long after its last renewal,
	// plus up to two renew intervals.
	DefaultLeaseDuration = 6 * time.Second
	// DefaultRenewInterval is how often a replica renews its Lease and reads the others'.
	DefaultRenewInterval = 1500 * time.Millisecond
	// DefaultRenewDeadline is how long a replica acts without a successful renewal; it stays
	// below DefaultLeaseDuration by more than a renew interval, so that a replica cut off from
	// the hub stops before the others count it dead.
	DefaultRenewDeadline = 3 * time.Second
	// DefaultRebalanceSpread bounds the random delay of the reconciles a replica starts for the
	// clusters it gains, so that a hand-over is not a burst.
	DefaultRebalanceSpread = 2 * time.Second
	// DefaultGroup is the member label's value: the replicas of one Holdfast.
	DefaultGroup = "holdfast"
)

// Options configure a Coordinator.
type Options struct {
	// Identity names the replica among the members: its pod name. Required; with the Lease name
	// prefix it must be a DNS subdomain.
	Identity string
	// Namespace holds the member Leases: the controller's own.
	Namespace string
	// Group is the value of MemberLabel on the Leases of the replicas that share the clusters;
	// DefaultGroup when empty.
	Group string
	// Reader reads the member Leases straight from the hub (not from a cache); Writer writes
	// this replica's.
	Reader client.Reader
	Writer client.Writer
	// Clusters lists the Clusters on the hub (from the manager's cache): the coordinator counts
	// and announces what the replica gains with it.
	Clusters func(context.Context) ([]types.NamespacedName, error)
	// Connections, if set, are the target connections: the coordinator closes those of the
	// clusters the replica no longer handles (their caches and drift watches with them).
	Connections Connections
	// OnReleased, if set, is called with each cluster the replica let go, once no reconcile of
	// its own runs on it any more: what the replica reports about the cluster (metrics) is
	// another replica's to report now.
	OnReleased func(types.NamespacedName)
	// LeaseDuration, RenewInterval, RenewDeadline and RebalanceSpread: the Default ones when 0.
	LeaseDuration   time.Duration
	RenewInterval   time.Duration
	RenewDeadline   time.Duration
	RebalanceSpread time.Duration
	// KeepLeaseOnStop leaves the Lease in place when the coordinator stops, as a killed replica
	// does (tests); otherwise it is deleted once nothing runs, and the others take over at once.
	KeepLeaseOnStop bool
	// Clock is injectable for tests.
	Clock clock.WithTicker
}

// Connections are what the coordinator needs of fleet.Registry.
type Connections interface {
	Keys() []types.NamespacedName
	Remove(types.NamespacedName) bool
}

// Coordinator runs one replica's side of the sharding: it renews the replica's member Lease,
// reads the others', decides which clusters the replica handles, admits reconciles of those
// only (Begin), and announces the clusters the replica gains (Source). It is a manager
// Runnable that runs on every replica, leader or not.
type Coordinator struct {
	opts Options
	gate gate

	// Touched by the Start goroutine only.
	state   *State
	alive   liveness
	live    []string
	lease   *leaseRecord
	renewed time.Time
	held    map[types.NamespacedName]bool
	// releasing are the clusters let go, since when: their connections close once their
	// reconciles returned and a lease duration passed (release).
	releasing map[types.NamespacedName]time.Time
	instance  string

	// mu guards the listeners of OnGained and the clusters held when they were last told.
	mu        sync.Mutex
	gained    []func([]types.NamespacedName)
	announced []types.NamespacedName
}

// New checks opts and returns a coordinator that acts on nothing until it runs.
func New(opts Options) (*Coordinator, error) {
	if opts.Identity == "" {
		return nil, errors.New("sharding needs the replica's identity (--shard-id)")
	}
	if errs := validation.IsDNS1123Subdomain(LeaseName(opts.Identity)); len(errs) > 0 {
		return nil, fmt.Errorf("shard identity %q: %v", opts.Identity, errs)
	}
	if opts.Namespace == "" || opts.Reader == nil || opts.Writer == nil || opts.Clusters == nil {
		return nil, errors.New("sharding needs a namespace, a reader, a writer and a Cluster lister")
	}
	if opts.Group == "" {
		opts.Group = DefaultGroup
	}
	if errs := validation.IsValidLabelValue(opts.Group); len(errs) > 0 {
		return nil, fmt.Errorf("shard group %q: %v", opts.Group, errs)
	}
	if opts.LeaseDuration <= 0 {
		opts.LeaseDuration = DefaultLeaseDuration
	}
	// Renewals and the deadline keep the defaults' proportions to the lease duration.
	if opts.RenewInterval <= 0 {
		opts.RenewInterval = opts.LeaseDuration / (DefaultLeaseDuration / DefaultRenewInterval)
	}
	if opts.RenewDeadline <= 0 {
		opts.RenewDeadline = opts.LeaseDuration / (DefaultLeaseDuration / DefaultRenewDeadline)
	}
	if opts.RenewDeadline+opts.RenewInterval >= opts.LeaseDuration {
		return nil, fmt.Errorf("shard renew deadline %s plus renew interval %s must stay below the lease duration %s: a replica cut off from the hub must stop before the others take its clusters over",
			opts.RenewDeadline, opts.RenewInterval, opts.LeaseDuration)
	}
	if opts.RebalanceSpread <= 0 {
		opts.RebalanceSpread = DefaultRebalanceSpread
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Coordinator{opts: opts, state: NewState(opts.Identity), gate: gate{acting: Ownership{Self: opts.Identity}},
		instance: fmt.Sprintf("%016x", rand.Uint64())}, nil
}

// Identity is the replica's name among the members.
func (c *Coordinator) Identity() string { return c.opts.Identity }

// NeedLeaderElection is false: every replica handles its share of the clusters.
func (c *Coordinator) NeedLeaderElection() bool { return false }

// Start runs rounds every RenewInterval until ctx ends, then stops acting and, unless
// KeepLeaseOnStop, deletes the replica's Lease once nothing of its own runs any more.
func (c *Coordinator) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("sharding").WithValues("replica", c.opts.Identity)
	ctx = logf.IntoContext(ctx, log)
	log.Info("Sharding clusters across replicas", "namespace", c.opts.Namespace, "leaseDuration", c.opts.LeaseDuration)
	ticker := c.opts.Clock.NewTicker(c.opts.RenewInterval)
	defer ticker.Stop()
	for {
		c.round(ctx)
		select {
		case <-ctx.Done():
			c.stop(log)
			return nil
		case <-ticker.C():
		}
	}
}

// round is one turn of the protocol: plan from the last read, renew (publishing the view once
// drained), read, act.
func (c *Coordinator) round(ctx context.Context) {
	log := logf.FromContext(ctx)
	if !c.renewed.IsZero() && c.opts.Clock.Since(c.renewed) > c.opts.RenewDeadline {
		c.lose(ctx, "the member Lease was not renewed within the renew deadline")
	}
	c.state.Plan(c.live)
	c.gate.set(c.state.Acting)

	view := c.state.Publishable(c.gate.drained())
	start := c.opts.Clock.Now()
	timeout := c.opts.RenewInterval / 2
	if !c.renewed.IsZero() {
		// A busy hub may answer late: the renewal may take until the renew deadline, when the
		// replica stops acting anyway. Giving up sooner let every cluster go for a renewal that
		// was only slow (seen at a thousand clusters on a saturated hub), and brought them back
		// a round later, with new connections and a full comparison each.
		timeout = max(timeout, c.opts.RenewDeadline-c.opts.Clock.Since(c.renewed))
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	err := c.renew(wctx, view)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			log.Error(err, "Renewing the member Lease failed")
		}
		if !c.renewed.IsZero() && c.opts.Clock.Since(c.renewed) > c.opts.RenewDeadline {
			c.lose(ctx, "the member Lease was not renewed within the renew deadline")
		}
		return
	}
	if !view.Equal(c.state.Published) {
		log.Info("Published a new view of the replicas", "view", view.String())
	}
	c.renewed = start
	c.state.Written(view)

	rctx, cancel := context.WithTimeout(ctx, c.opts.RenewInterval/2)
	members, err := c.read(rctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			log.Error(err, "Reading the member Leases failed")
		}
		return
	}
	c.live = c.live[:0]
	for _, m := range members {
		c.live = append(c.live, m.ID)
	}
	c.state.Observed(members)
	c.gate.set(c.state.Acting)
	metrics.SetShardMembers(c.opts.Identity, len(NewView(append(c.live, c.opts.Identity)...)))
	c.settle(ctx)
}

// lose stops acting on every cluster.
func (c *Coordinator) lose(ctx context.Context, why string) {
	if len(c.state.Acting.Views) > 0 {
		logf.FromContext(ctx).Info("Handling no cluster", "reason", why)
	}
	c.state.Lost()
	c.gate.set(c.state.Acting)
	c.settle(ctx)
}

// settle counts the clusters the replica handles, announces those it gained, and closes the
// connections of those it let go once nothing of its own runs on them and a lease duration
// passed (see release).
func (c *Coordinator) settle(ctx context.Context) {
	log := logf.FromContext(ctx)
	if c.opts.Connections != nil {
		for _, k := range c.opts.Connections.Keys() {
			if _, letGo := c.releasing[k]; !letGo && !c.held[k] && !c.gate.owns(k) && !c.gate.busy(k) {
				c.opts.Connections.Remove(k)
			}
		}
	}
	lctx, cancel := context.WithTimeout(ctx, c.opts.RenewInterval)
	clusters, err := c.opts.Clusters(lctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			log.Error(err, "Listing Clusters failed")
		}
		return
	}
	held := make(map[types.NamespacedName]bool, len(clusters)/2+1)
	var gained []types.NamespacedName
	for _, k := range clusters {
		if c.gate.owns(k) {
			held[k] = true
			if !c.held[k] {
				gained = append(gained, k)
			}
		}
	}
	// Clusters held before and now whose reconciles were turned away in between (the replica
	// stopped acting on them for a moment: a renewal late, views disagreeing) are queued again
	// like gained ones: the drift events and requests dropped meanwhile came to no replica.
	for _, k := range c.gate.takeTurnedAway() {
		if held[k] && c.held[k] {
			gained = append(gained, k)
		}
	}
	lost := 0
	for k := range c.held {
		if !held[k] {
			lost++
			if c.releasing == nil {
				c.releasing = map[types.NamespacedName]time.Time{}
			}
			c.releasing[k] = c.opts.Clock.Now()
		}
	}
	c.held = held
	c.release(held)
	metrics.SetShardClusters(c.opts.Identity, len(held))
	if len(gained) > 0 || lost > 0 {
		log.Info("Clusters handed over", "gained", len(gained), "lost", lost, "held", len(held))
	}
	c.mu.Lock()
	listeners := c.gained
	c.announced = c.announced[:0]
	for k := range held {
		c.announced = append(c.announced, k)
	}
	c.mu.Unlock()
	if len(gained) > 0 {
		for _, f := range listeners {
			f(gained)
		}
	}
}

// release finishes letting go of the clusters the replica no longer holds once their
// reconciles have returned and a lease duration passed since: their connections are closed and
// OnReleased told. Until then the connection, its caches and drift watches stay, reading only
// (the gate lets nothing write): a replica that let everything go because its own renewal was
// late (a busy hub) takes its clusters back a round later, and closing them all at once would
// make it reconnect to, list and watch every one of them again, a herd that held corrections up
// for tens of seconds at a thousand clusters.
func (c *Coordinator) release(held map[types.NamespacedName]bool) {
	for k, since := range c.releasing {
		switch {
		case held[k]:
			delete(c.releasing, k)
		case !c.gate.busy(k) && c.opts.Clock.Since(since) >= c.opts.LeaseDuration:
			if c.opts.Connections != nil {
				c.opts.Connections.Remove(k)
			}
			if c.opts.OnReleased != nil {
				c.opts.OnReleased(k)
			}
			delete(c.releasing, k)
		}
	}
}

// stop ends the replica's part: it acts on nothing, waits up to the renew deadline for its
// reconciles to return, and deletes its Lease so that the others take over without waiting for
// it to expire.
func (c *Coordinator) stop(log logr.Logger) {
	c.state.Lost()
	c.gate.set(c.state.Acting)
	metrics.SetShardClusters(c.opts.Identity, 0)
	if c.opts.KeepLeaseOnStop {
		return
	}
	deadline := c.opts.Clock.Now().Add(c.opts.RenewDeadline)
	for !c.gate.drained() {
		if c.opts.Clock.Now().After(deadline) {
			log.Info("Reconciles still running at shutdown; the member Lease is left to expire")
			return
		}
		c.opts.Clock.Sleep(50 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.RenewInterval)
	defer cancel()
	if err := c.deleteLease(ctx); err != nil {
		log.Error(err, "Deleting the member Lease failed; it expires instead")
	}
}

// Begin admits a reconcile of cluster on this replica: ok is false when another replica
// handles it (the request is dropped). The returned context ends when the replica stops
// handling the cluster; done must be called when the reconcile returns. A nil Coordinator
// (no sharding) admits everything.
func (c *Coordinator) Begin(ctx context.Context, cluster types.NamespacedName) (_ context.Context, done func(), ok bool) {
	if c == nil {
		return ctx, func() {}, true
	}
	return c.gate.begin(ctx, cluster)
}

// Owns reports whether this replica handles cluster now; always true for a nil Coordinator.
func (c *Coordinator) Owns(cluster types.NamespacedName) bool {
	return c == nil || c.gate.owns(cluster)
}

// OnGained registers f to be called with the clusters the replica starts handling, first with
// those it already handles: a controller that starts after a hand-over misses none (the events
// of the cluster's objects may have been dropped while another replica held it). f runs on the
// coordinator's goroutine (the first time on the caller's) and must not block.
func (c *Coordinator) OnGained(f func([]types.NamespacedName)) {
	c.mu.Lock()
	c.gained = append(c.gained, f)
	held := slices.Clone(c.announced)
	c.mu.Unlock()
	if len(held) > 0 {
		f(held)
	}
}

// jitter is a random delay within the rebalance spread, shorter when few clusters move.
func (c *Coordinator) jitter(n int) time.Duration {
	spread := min(c.opts.RebalanceSpread, time.Duration(n)*20*time.Millisecond)
	if spread <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(spread)))
}

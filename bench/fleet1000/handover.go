package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/sharding"
)

// With -replicas r > 1, each size measures sharding and a replica's death instead of the single
// controller's costs (issue 14: "Two replicas: each holds about half the clusters; kill one
// during drift injection: every drift is still corrected, none twice, handover ≤ 15 s"):
//
//   - the same simulated fleet, and r controller replicas in this process, each a manager with
//     sharding on (controller.Options.Shard, identities replica-1 … replica-r, leader election
//     and member Leases in the fleet's namespace), each with its own counted transports and every
//     write it sends to a simulated cluster logged with its identity (writeLog);
//   - the first rollout, as without replicas; then, once every replica's holdfast_shard_clusters
//     gauge agrees with the rendezvous hashing of the view of all replicas (or after
//     shareTimeout), the clusters each holds, as the gauge and as the connections its fleet
//     registry keeps;
//   - drift injection: -editors workers, each editing one random simulated cluster's ConfigMap
//     at a time (measure.Edit: an Update as bench-editor, then waiting until this program's watch
//     sees the declared value back; no two workers on one ConfigMap at once), from the start
//     until -after-kill after the kill; -kill-after after the start, the last replica is
//     killed: its manager is cancelled with ShardKeepLeaseOnStop, so that its member Lease stays
//     until it expires, as a crashed replica's does.
//
// What it reports: how long after the kill the survivors held every cluster (their gauges add
// up to n), sent their first successful write to a cluster the killed replica held (the
// handover time of the goal: the first drift corrected there, as edits on those clusters are
// pending from the kill on), and first sent anything to the last of those clusters; every edit
// corrected or not; each edit's writes of the edited ConfigMap by any replica, from its Update
// until the same ConfigMap's next edit or the end of the injection (more than one: corrected
// twice, listed); writes of the killed replica sent after the kill; and correction latencies by
// when the edit was made (before the kill, from the kill until the survivors held every
// cluster, after) and whose cluster it was (the killed replica's or a survivor's).

const (
	replicaPrefix = "replica-"
	// shareTimeout bounds the wait for the gauges to agree with the hashing after the rollout.
	shareTimeout = 30 * time.Second
	// goalHandover is the bound on a hand-over.
	goalHandover = 15 * time.Second
	// shareSlack is how far from an even share a replica's may be in the goal: ±20 % of it
	// (40–60 % of the clusters with two replicas).
	shareSlack = 0.2
	// quietAfter is how long the controller must have sent nothing after the last edit before
	// the writes are counted, so that a late second write is not missed.
	quietAfter = 2 * time.Second
)

func replicaID(i int) string { return fmt.Sprintf("%s%d", replicaPrefix, i+1) }

// handoverEdit is one edit of the drift injection.
type handoverEdit struct {
	*measure.EditRun
	// victims is whether the killed replica held the edited cluster before the kill.
	victims bool
	// writes are the replicas' writes of the edited ConfigMap from its Update until its next
	// edit or the end of the injection.
	writes []write
}

func measureHandover(ctx context.Context, cfg config, n int) (_ *handoverResult, retErr error) {
	r, began := &handoverResult{n: n, replicas: cfg.replicas}, time.Now()
	b, stop, err := startBench(ctx, cfg, n)
	if err != nil {
		return nil, err
	}
	defer func() { retErr = errors.Join(retErr, stop()) }()
	h := b.Harness
	r.setup, r.namespace = time.Since(began), h.Fleet.Namespace

	log := newWriteLog()
	var replicas []*measure.Replica
	for i := range cfg.replicas {
		id := replicaID(i)
		rep, err := h.StartReplica(ctx, id, float32(cfg.hubQPS), controller.Options{Concurrency: cfg.concurrency,
			ShardKeepLeaseOnStop: true, TargetTransport: log.transport(id)})
		if err != nil {
			return nil, err
		}
		replicas = append(replicas, rep)
		r.ids = append(r.ids, id)
	}
	if err := b.WaitClustersReady(ctx, cfg.timeout); err != nil {
		return nil, err
	}
	r.clustersReady = time.Since(h.Started)
	fmt.Fprintf(os.Stderr, "%d clusters: all Ready %s after the replicas started\n", n, r.clustersReady.Round(time.Millisecond))

	if err := b.createTemplate(ctx); err != nil {
		return nil, err
	}
	for _, s := range b.Sims {
		h.Statuses[naming.StatusName(setName, s)] = s
	}
	created := time.Now()
	if err := b.createServiceSet(ctx); err != nil {
		return nil, err
	}
	if _, err := h.WaitStatuses(ctx, cfg.timeout, measure.ReadyInSync(cfg.objects)); err != nil {
		return nil, fmt.Errorf("waiting for the first rollout: %w", err)
	}
	r.rollout = time.Since(created)
	fmt.Fprintf(os.Stderr, "%d clusters: rolled out in %s\n", n, r.rollout.Round(time.Millisecond))

	// Shares.
	all := sharding.NewView(r.ids...)
	r.hashed = map[string]int{}
	owner := map[string]string{}
	for _, s := range b.Sims {
		owner[s] = all.Owner(types.NamespacedName{Namespace: h.Fleet.Namespace, Name: s}.String())
		r.hashed[owner[s]]++
	}
	r.held, r.sharesSettled = waitShares(ctx, r.hashed)
	r.connections = map[string]int{}
	for i, rep := range replicas {
		r.connections[r.ids[i]] = len(rep.Registry.Keys())
	}
	time.Sleep(cfg.settle)
	h.Counter.WaitQuiet(time.Second, time.Minute)

	// Drift injection with a kill.
	victim := replicas[len(replicas)-1]
	r.victim = victim.ID
	survivors := sharding.NewView(r.ids[:len(r.ids)-1]...)
	for _, s := range b.Sims {
		if owner[s] == r.victim {
			r.victimClusters = append(r.victimClusters, s)
		}
	}
	for _, rep := range replicas {
		rep.Counter.Reset()
	}
	fmt.Fprintf(os.Stderr, "%d clusters: editing with %d workers; killing %s (%d clusters) after %s\n", n, cfg.editors, r.victim, len(r.victimClusters), cfg.killAfter)
	r.began = time.Now()
	stopEditing, stopSampling := make(chan struct{}), make(chan struct{})
	var edits []*measure.EditRun
	var samples []gaugeSample
	var wg, sampling sync.WaitGroup
	wg.Go(func() { edits = b.editUntil(ctx, stopEditing) })
	sampling.Go(func() { samples = watchShares(stopSampling) })
	if err := sleep(ctx, cfg.killAfter); err != nil {
		return nil, err
	}
	log.Mark(time.Now())
	r.killed = time.Now()
	stopped := make(chan error, 1)
	go func() {
		err := victim.Stop()
		r.stopTook = time.Since(r.killed)
		stopped <- err
	}()
	if err := sleep(ctx, cfg.afterKill-time.Since(r.killed)); err != nil {
		return nil, err
	}
	close(stopEditing)
	wg.Wait()
	if err := <-stopped; err != nil {
		return nil, err
	}
	h.Counter.WaitQuiet(quietAfter, time.Minute)
	r.ended = time.Now()
	close(stopSampling)
	sampling.Wait()
	r.shares(samples)
	fmt.Fprintf(os.Stderr, "%d clusters: %d edits; analysing the writes\n", n, len(edits))

	r.analyse(log, edits, owner, survivors)
	for i, rep := range replicas {
		counts := rep.Counter.Reset()
		r.requests = append(r.requests, replicaRequests{id: r.ids[i], counts: counts})
	}
	return r, nil
}

// sleep waits for d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// waitShares waits until the gauges show the shares want (the hashing's), up to shareTimeout,
// and returns the last reading and whether it matched.
func waitShares(ctx context.Context, want map[string]int) (map[string]int, bool) {
	deadline := time.Now().Add(shareTimeout)
	for {
		got := metrics.ShardClusters()
		match := true
		for id, n := range want {
			match = match && got[id] == n
		}
		if match || time.Now().After(deadline) || ctx.Err() != nil {
			return got, match
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// gaugeSample is every replica's holdfast_shard_clusters at one time.
type gaugeSample struct {
	at   time.Time
	held map[string]int
}

// watchShares samples the gauges every 200 ms until stop is closed, and returns the samples.
func watchShares(stop <-chan struct{}) []gaugeSample {
	var samples []gaugeSample
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		samples = append(samples, gaugeSample{at: time.Now(), held: metrics.ShardClusters()})
		select {
		case <-stop:
			return samples
		case <-tick.C:
		}
	}
}

// editUntil runs cfg.editors workers editing random simulated clusters' ConfigMaps, each one
// edit at a time waiting for its correction (measure.Edit), never two on one ConfigMap at once,
// until stop is closed; it returns every edit.
func (b *bench) editUntil(ctx context.Context, stop <-chan struct{}) []*measure.EditRun {
	names := b.configMapNames()
	var mu sync.Mutex
	busy := map[types.NamespacedName]bool{}
	var runs []*measure.EditRun
	seq := 0
	pick := func() (types.NamespacedName, int) {
		mu.Lock()
		defer mu.Unlock()
		for {
			k := types.NamespacedName{Namespace: b.Sims[b.rng.IntN(len(b.Sims))], Name: names[b.rng.IntN(len(names))]}
			if !busy[k] {
				busy[k] = true
				seq++
				return k, seq
			}
		}
	}
	var wg sync.WaitGroup
	for range b.cfg.editors {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if ctx.Err() != nil {
					return
				}
				k, seq := pick()
				srv := b.Server[k.Namespace]
				e := measure.Edit(ctx, b.Clientsets[srv], b.obs[srv], editor, k.Namespace, k.Name, seq, b.cfg.correctTimeout)
				mu.Lock()
				runs = append(runs, e)
				delete(busy, k)
				mu.Unlock()
				time.Sleep(b.cfg.gap)
			}
		})
	}
	wg.Wait()
	return runs
}

// runHandover measures each size with cfg.replicas replicas (run, with -replicas > 1).
func runHandover(ctx context.Context, cfg config, began time.Time) error {
	fmt.Printf("Sizes: %v clusters on %d API servers, %d objects each, %d replicas of %d controller workers; the last killed %s into the drift injection, edits by %d workers until %s after.\n\n",
		cfg.sizes, cfg.servers, cfg.objects, cfg.replicas, cfg.concurrency, cfg.killAfter, cfg.editors, cfg.afterKill)
	var results []*handoverResult
	for _, n := range cfg.sizes {
		r, err := measureHandover(ctx, cfg, n)
		if err != nil {
			return fmt.Errorf("%d clusters: %w", n, err)
		}
		r.print(cfg)
		results = append(results, r)
		runtime.GC()
	}
	printHandoverSummary(results)
	fmt.Printf("Run time: %s (load average at the end: %s).\n", measure.Seconds(time.Since(began)), measure.LoadAverage())
	return nil
}

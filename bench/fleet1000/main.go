// Command fleet1000 measures Holdfast on a simulated fleet of hundreds to a thousand clusters
// (issue 14): how long the first rollout and a template change to every cluster take, how much
// memory the controller holds, what it asks of the API servers while nothing changes, and how
// fast it corrects a drift — at rest and while a template change rolls out to the whole fleet.
// The API servers share the machine with the controller, so each figure has a floor measured in
// the same run on the same API servers: the rollouts an ideal rollout's, the corrections an ideal
// corrector's; both are reported as Holdfast's ÷ the ideal's.
//
// For each size n of -clusters (100,300,1000), on a fresh fleet:
//
//   - it starts a hub and -servers (3) target API servers (internal/localfleet, without
//     kube-controller-manager) and simulates n clusters on them, round robin: cluster sim-NNNN is
//     the namespace sim-NNNN on its server, reached with credentials of its own limited to that
//     namespace — a client certificate for the user holdfast-sim-NNNN minted by the server's CA
//     (sandbox.ControlPlane.KubeconfigForUser) and a Role with every permission in the namespace,
//     bound to that user, nothing cluster-wide. Each simulated cluster's watches therefore see
//     only its own objects, as on real clusters; Holdfast finds it may not list or watch
//     cluster-wide (SelfSubjectAccessReview) and watches each kind in the namespace. Each is
//     registered on the hub (a kubeconfig Secret and a Cluster labelled fleet=sim);
//   - it starts the controller in this process (controller.NewManager, -concurrency workers,
//     every request it sends counted per API server) and waits until every Cluster is Ready;
//   - ideal rollout, alone, before Holdfast's: the template's objects at revision 1 (the same
//     kinds and data, see below) sent to every simulated cluster as one forced server-side apply
//     each (field manager bench-ideal-rollout), by -concurrency workers in total through the API
//     servers' admin clients, each taking one cluster at a time: time until the last apply
//     returned, and the CPU time of this process, the hub and the targets meanwhile. It is the
//     floor of a rollout on these API servers: nothing read, compared or recorded, no status.
//     Its objects are named ideal-<name> in the cluster's namespace and carry no
//     bench.holdfast.dev/fleet label, so that neither this program's watches, the ideal
//     corrector nor the controller (whose target caches select what it manages) see them;
//   - first rollout: one inline ServiceTemplate of -objects (20) objects per cluster (ConfigMaps,
//     two Secrets and a ServiceAccount; each object's namespace is the cluster's name, templated
//     with {{ .Cluster.Name }}) and one MultiClusterService in ContinuousWithDriftDetection mode
//     selecting fleet=sim: time from its creation until every status object is Ready with every
//     object in sync, and the controller's Go heap and RSS then (this process's, minus a baseline
//     taken before the controller was built: this program's own watches hold only a few fields
//     per ConfigMap, see measure.ConfigMapInformer);
//   - idle: after the rollout settled, a window of -idle (1m) with nothing changing: every request
//     the controller sent, grouped as watch requests, health probes and everything else (the goal:
//     nothing else);
//   - drift at rest: -edits (200) rounds of two edits (an Update of one ConfigMap's data.value as
//     field manager bench-editor), one on a random simulated cluster's ConfigMap, corrected by
//     Holdfast, then one of the same ConfigMap name in the namespace "ideal" of the same API
//     server, corrected by an ideal corrector in this process (one label-selected watch, one
//     forced server-side apply per change; measure.Ideal); each waits until this program's own
//     watch of that server sees the declared value back (t0: the Update returned). p50/p90/p99
//     per corrector and Holdfast's p99 ÷ the ideal's;
//   - template change: first the ideal rollout again, alone, of revision 2 to its ideal-
//     objects; then the template's data.rev changes in every ConfigMap of every cluster; time
//     until every status object is Ready in sync at a new revision; and, while it rolls out, the
//     same alternating edits as at rest, until it is done (at most -rollout-edits), with the same
//     latencies and ratio — the goal: a correction is never queued behind routine work.
//
// It prints per size the figures, and at the end the cost table (rollout and template change
// with the ideal's and the ratios, memory and correction latency against the number of clusters)
// with the goal lines: first rollout and template change each ≤ 60 s, RSS ≤ 1 GiB, nothing but
// watches and probes while idle, correction p99 ≤ 2× the ideal's, at rest and during the
// rollout; then per size Holdfast's first rollout and template change ÷ the ideal rollout's.
// Holdfast's times run until every status object says so, the ideal's until its last apply
// returned; the ideal template change runs without edits beside it.
//
// With -replicas r > 1 it measures sharding across r controller replicas instead, and the death
// of one during drift injection (issue 14's goal: each replica holds about half the clusters;
// every drift still corrected, none twice; hand-over ≤ 15 s): see handover.go.
//
// With -bystander the Holdfast edits are made on one more cluster that the template change does
// not reach (bystander.go).
//
// Usage: go run ./bench/fleet1000 [-clusters 100,300,1000] [-servers 3] [-objects 20] [-bystander]
//
//	go run ./bench/fleet1000 -clusters 60 -replicas 2 [-editors 4] [-kill-after 20s] [-after-kill 45s]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/naming"
)

const (
	templateNamespace = "bench"
	templateName      = "fleet"
	setName           = "fleet"
	editor            = "bench-editor"
	// fleetLabel marks every ConfigMap of either corrector: this program's watches select the
	// key, the ideal corrector's its value byIdeal.
	fleetLabel = "bench.holdfast.dev/fleet"
	byHoldfast = "holdfast"
	byIdeal    = "ideal"
	// idealNamespace is the ideal corrector's namespace on each API server.
	idealNamespace = "ideal"
	// goalSeconds and goalRSS and goalRatio are the goals.
	goalSeconds = 60
	goalRSS     = 1 << 30
	goalRatio   = 2
)

type config struct {
	sizes                   []int
	servers, objects        int
	edits, rolloutEdits     int
	concurrency             int
	hubQPS                  float64
	seed                    uint64
	idle, settle, gap       time.Duration
	timeout, correctTimeout time.Duration
	heapProfile, cpuProfile string
	// hubProfile is a file for a CPU profile of the hub's API server during the largest size's
	// first rollout.
	hubProfile string
	// changeProfile and hubChangeProfile are files for CPU profiles of the controller and of the
	// hub's API server during the largest size's template change.
	changeProfile, hubChangeProfile string
	// memoryLimit is the controller's container memory limit: the Go memory limit is set to 90%
	// of it above this process's baseline, as `holdfast controller` sets it from its cgroup's
	// (0: none).
	memoryLimit int64
	// replicas > 1 measures sharding and a replica's death instead (handover.go), with editors
	// editing at once, the last replica killed killAfter after the start and edits until
	// afterKill after the kill.
	replicas, editors    int
	killAfter, afterKill time.Duration
	// bystander adds one cluster the template change does not reach, and makes every Holdfast
	// edit there (bystander.go).
	bystander bool
}

func main() {
	cfg := config{sizes: []int{100, 300, 1000}}
	flag.Func("clusters", "simulated clusters: a comma-separated `list` of sizes, each measured on a fresh fleet (default 100,300,1000)", func(v string) error {
		sizes, err := parseSizes(v)
		cfg.sizes = sizes
		return err
	})
	flag.IntVar(&cfg.servers, "servers", 3, "target API servers the simulated clusters share")
	flag.IntVar(&cfg.objects, "objects", 20, "objects per cluster (ConfigMaps, 2 Secrets, a ServiceAccount)")
	flag.IntVar(&cfg.edits, "edits", 200, "edits per corrector at rest")
	flag.IntVar(&cfg.rolloutEdits, "rollout-edits", 200, "at most this many edits per corrector while the template change rolls out")
	flag.IntVar(&cfg.concurrency, "concurrency", 10, "the controller's workers (controller.Options.Concurrency; --concurrency's default is 10)")
	flag.Float64Var(&cfg.hubQPS, "hub-qps", 0, "the controller's hub client rate limit; 0 leaves NewManager's default (50/s), -1 turns it off")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the edits' random choices")
	flag.DurationVar(&cfg.idle, "idle", time.Minute, "the idle window (0: none)")
	flag.DurationVar(&cfg.settle, "settle", 10*time.Second, "wait after the rollout before the idle window")
	flag.DurationVar(&cfg.gap, "gap", 20*time.Millisecond, "pause after each correction before the next edit")
	flag.DurationVar(&cfg.timeout, "timeout", 15*time.Minute, "how long to wait for the fleet, a rollout or a template change")
	flag.DurationVar(&cfg.correctTimeout, "correct-timeout", 60*time.Second, "how long to wait for one correction before going on")
	flag.StringVar(&cfg.heapProfile, "heap-profile", "", "write a heap profile after the largest size's first rollout to this `file`")
	flag.StringVar(&cfg.cpuProfile, "cpu-profile", "", "write a CPU profile of the largest size's first rollout to this `file`")
	flag.StringVar(&cfg.hubProfile, "hub-cpu-profile", "", "write a CPU profile of the hub's API server during the first 30 s of the largest size's first rollout to this `file`")
	flag.StringVar(&cfg.changeProfile, "change-cpu-profile", "", "write a CPU profile of the controller during the largest size's template change to this `file`")
	flag.StringVar(&cfg.hubChangeProfile, "hub-change-cpu-profile", "", "write a CPU profile of the hub's API server during the first 30 s of the largest size's template change to this `file`")
	flag.Int64Var(&cfg.memoryLimit, "memory-limit", 1<<30, "the controller's memory limit in bytes, as the chart's resources.limits.memory (1 GiB): the Go memory limit is 90% of it above this process's baseline, as `holdfast controller` sets it from its cgroup; 0 sets none")
	flag.IntVar(&cfg.replicas, "replicas", 1, "controller replicas sharing the clusters; more than 1 measures the hand-over when the last one is killed instead of the single controller's costs (see handover.go)")
	flag.IntVar(&cfg.editors, "editors", 4, "with -replicas: edits made at once during the drift injection, each waiting for its correction")
	flag.DurationVar(&cfg.killAfter, "kill-after", 20*time.Second, "with -replicas: editing before the last replica is killed")
	flag.DurationVar(&cfg.afterKill, "after-kill", 45*time.Second, "with -replicas: editing after the kill")
	flag.BoolVar(&cfg.bystander, "bystander", false, "add one cluster with a service set of its own that the template change does not reach, and make every Holdfast edit there (issue 28: drift beside a rollout)")
	measure.ParseFlags(measure.AtLeast("servers", 1), measure.AtLeast("objects", 4), measure.AtLeast("edits", 1), measure.AtLeast("rollout-edits", 1), measure.AtLeast("concurrency", 1),
		measure.AtLeast("replicas", 1), measure.AtLeast("editors", 1))
	measure.Main(func(ctx context.Context) error { return run(ctx, cfg) })
}

func parseSizes(v string) ([]int, error) {
	sizes, err := measure.ParseClusterCounts(v)
	if err != nil {
		return nil, err
	}
	slices.Sort(sizes)
	return slices.Compact(sizes), nil
}

func run(ctx context.Context, cfg config) error {
	began := time.Now()
	fmt.Printf("Machine: %s\n\n", measure.Machine())
	if cfg.replicas > 1 {
		return runHandover(ctx, cfg, began)
	}
	fmt.Printf("Sizes: %v clusters on %d API servers, %d objects each, %d controller workers.\n\n", cfg.sizes, cfg.servers, cfg.objects, cfg.concurrency)
	if cfg.memoryLimit > 0 {
		fmt.Printf("Go memory limit: 90%% of %s above the process's baseline, as `holdfast controller` sets it under a %s container limit.\n\n",
			measure.MiB(cfg.memoryLimit), measure.MiB(cfg.memoryLimit))
	}
	var results []*result
	for _, n := range cfg.sizes {
		r, err := measureSize(ctx, cfg, n)
		if err != nil {
			return fmt.Errorf("%d clusters: %w", n, err)
		}
		r.print(cfg)
		results = append(results, r)
		runtime.GC()
	}
	printSummary(cfg, results)
	fmt.Printf("Run time: %s (load average at the end: %s).\n", measure.Seconds(time.Since(began)), measure.LoadAverage())
	return nil
}

// bench is one size's fleet.
type bench struct {
	*measure.SimFleet
	cfg    config
	n      int
	obs    []*measure.Observer
	ideals []*measure.Ideal
	rng    *rand.Rand
	// bystander is the cluster outside the rollout with -bystander ("" without); it is not in
	// Sims.
	bystander string
}

// configMapNames are the ConfigMaps the template declares (the edits pick among them).
func (b *bench) configMapNames() []string {
	var names []string
	for i := range b.cfg.objects - 3 {
		names = append(names, fmt.Sprintf("config-%02d", i))
	}
	return names
}

// startBench starts a fresh fleet of n simulated clusters (measure.StartSimFleet: a hub,
// cfg.servers API servers and the clusters registered), and this program's watches and ideal
// correctors (setUp). stop ends it all.
func startBench(ctx context.Context, cfg config, n int) (_ *bench, stop func() error, _ error) {
	fmt.Fprintf(os.Stderr, "%d clusters: starting a hub and %d API servers\n", n, cfg.servers)
	opts := measure.SimFleetOptions{Servers: cfg.servers, Clusters: n}
	if cfg.bystander {
		opts.Clusters, opts.Labels = n+1, bystanderLabels(n)
	}
	f, err := measure.StartSimFleet(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	b := &bench{SimFleet: f, cfg: cfg, n: n, rng: rand.New(rand.NewPCG(cfg.seed, uint64(n)))}
	if cfg.bystander {
		b.bystander = b.Sims[n] // taken out of Sims once every Cluster is Ready
	}
	watchCtx, stopWatches := context.WithCancel(ctx)
	stop = func() error {
		stopWatches()
		return f.Stop()
	}
	if err := b.setUp(ctx, watchCtx); err != nil {
		return nil, nil, errors.Join(err, stop())
	}
	return b, stop, nil
}

func measureSize(ctx context.Context, cfg config, n int) (_ *result, retErr error) {
	r, began := &result{n: n}, time.Now()
	b, stop, err := startBench(ctx, cfg, n)
	if err != nil {
		return nil, err
	}
	defer func() { retErr = errors.Join(retErr, stop()) }()
	h := b.Harness
	r.setup = time.Since(began)

	heap0, rss0, err := measure.SelfMemory()
	if err != nil {
		return nil, err
	}
	if cfg.memoryLimit > 0 {
		debug.SetMemoryLimit(rss0 + cfg.memoryLimit*9/10)
		defer debug.SetMemoryLimit(math.MaxInt64)
	}
	if err := h.StartController(ctx, float32(cfg.hubQPS), controller.Options{Concurrency: cfg.concurrency, SkipNameValidation: true}); err != nil {
		return nil, err
	}
	if err := b.WaitClustersReady(ctx, cfg.timeout); err != nil {
		return nil, err
	}
	r.clustersReady = time.Since(h.Started)
	b.Sims = b.Sims[:n]
	fmt.Fprintf(os.Stderr, "%d clusters: all Ready %s after the controller started\n", n, r.clustersReady.Round(time.Millisecond))

	// The ideal rollout, alone: before Holdfast's, which it must not compete with.
	if r.idealRollout, r.idealRolloutCPU, err = b.idealRollout(ctx, 1); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "%d clusters: ideal rollout in %s\n", n, r.idealRollout.Round(time.Millisecond))
	if r.floorRollout, r.floorRolloutCPU, err = b.idealController(ctx, 1); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "%d clusters: ideal controller's rollout in %s\n", n, r.floorRollout.Round(time.Millisecond))

	// First rollout.
	if err := b.createTemplate(ctx); err != nil {
		return nil, err
	}
	for _, s := range b.Sims {
		h.Statuses[naming.StatusName(setName, s)] = s
	}
	if b.bystander != "" {
		h.Statuses[naming.StatusName(bystanderSet, b.bystander)] = b.bystander
	}
	h.Counter.Reset()
	var stopProfile func() error
	waitHubRolloutProfile := func() error { return nil }
	if n == cfg.sizes[len(cfg.sizes)-1] {
		if cfg.cpuProfile != "" {
			if stopProfile, err = measure.StartCPUProfile(cfg.cpuProfile); err != nil {
				return nil, err
			}
		}
		waitHubRolloutProfile = h.StartHubCPUProfile(ctx, cfg.hubProfile, 30)
	}
	cpu0 := b.CPU()
	created := time.Now()
	if err := b.createServiceSet(ctx); err != nil {
		return nil, err
	}
	at, err := h.WaitStatuses(ctx, cfg.timeout, measure.ReadyInSync(cfg.objects))
	if err != nil {
		return nil, fmt.Errorf("waiting for the first rollout: %w", err)
	}
	r.rollout, r.rolloutSpread = time.Since(created), spread(at, created)
	r.rolloutCPU = b.CPU().Minus(cpu0)
	if stopProfile != nil {
		if err := stopProfile(); err != nil {
			return nil, err
		}
	}
	if err := waitHubRolloutProfile(); err != nil {
		return nil, err
	}
	r.rolloutRequests = h.Counter.Reset()
	if r.heap, r.rss, err = measure.SelfMemory(); err != nil {
		return nil, err
	}
	r.heap, r.rss = r.heap-heap0, r.rss-rss0
	if cfg.heapProfile != "" && n == cfg.sizes[len(cfg.sizes)-1] {
		if err := measure.WriteHeapProfile(cfg.heapProfile); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(os.Stderr, "%d clusters: rolled out in %s, RSS +%s\n", n, r.rollout.Round(time.Millisecond), measure.MiB(r.rss))

	// Idle.
	time.Sleep(cfg.settle)
	h.Counter.WaitQuiet(time.Second, time.Minute)
	if cfg.idle > 0 {
		fmt.Fprintf(os.Stderr, "%d clusters: idle for %s\n", n, cfg.idle)
		h.Counter.Reset()
		time.Sleep(cfg.idle)
		r.idle = h.Counter.Reset()
		r.idleWindow = cfg.idle
	}

	// Drift at rest.
	fmt.Fprintf(os.Stderr, "%d clusters: %d edits per corrector at rest\n", n, cfg.edits)
	r.restHoldfast, r.restIdeal = b.edits(ctx, cfg.edits, nil)

	// Template change, with edits while it rolls out (the bystander's status object stays as it
	// is: the change does not reach it).
	if b.bystander != "" {
		delete(h.Statuses, naming.StatusName(bystanderSet, b.bystander))
	}
	revisions, err := b.ServiceRevisions(ctx)
	if err != nil {
		return nil, err
	}
	if r.idealChange, r.idealChangeCPU, err = b.idealRollout(ctx, 2); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "%d clusters: ideal template change in %s\n", n, r.idealChange.Round(time.Millisecond))
	if r.floorChange, r.floorChangeCPU, err = b.idealController(ctx, 2); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "%d clusters: ideal controller's template change in %s\n", n, r.floorChange.Round(time.Millisecond))
	if err := b.ChangeTemplate(ctx, templateNamespace, templateName, b.manifests(2)); err != nil {
		return nil, err
	}
	largest := n == cfg.sizes[len(cfg.sizes)-1]
	stopChangeProfile, waitHubProfile := func() error { return nil }, func() error { return nil }
	if largest {
		if stopChangeProfile, err = measure.StartCPUProfile(cfg.changeProfile); err != nil {
			return nil, err
		}
		waitHubProfile = h.StartHubCPUProfile(ctx, cfg.hubChangeProfile, 30)
	}
	cpu0 = b.CPU()
	changed := time.Now()
	fmt.Fprintf(os.Stderr, "%d clusters: template changed; editing while it rolls out\n", n)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { r.rollHoldfast, r.rollIdeal = b.edits(ctx, cfg.rolloutEdits, done) })
	at, err = h.WaitStatuses(ctx, cfg.timeout, func(css *holdfastv1.ClusterServiceStatus) bool {
		return measure.ReadyInSync(cfg.objects)(css) && len(css.Status.Services) == 1 &&
			css.Status.Services[0].Revision != revisions[css.Name]
	})
	close(done)
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("waiting for the template change: %w", err)
	}
	if err := errors.Join(stopChangeProfile(), waitHubProfile()); err != nil {
		return nil, err
	}
	r.change, r.changeSpread = time.Since(changed), spread(at, changed)
	r.changeCPU = b.CPU().Minus(cpu0)
	if _, r.rssEnd, err = measure.SelfMemory(); err != nil {
		return nil, err
	}
	r.rssEnd -= rss0
	if peak, err := measure.PeakRSS(os.Getpid()); err == nil {
		r.peakRSS = peak - rss0
	}
	for _, c := range b.ideals {
		if f := c.Failures(); f != "" {
			r.idealFailures = append(r.idealFailures, f)
		}
	}
	return r, nil
}

// spread is the time from start until the first and the last status object got there, and the
// median.
func spread(at map[string]time.Time, start time.Time) measure.Spread[time.Duration] {
	var ds []time.Duration
	for _, t := range at {
		ds = append(ds, t.Sub(start))
	}
	return measure.SpreadOf(ds)
}

// setUp starts this program's watches and the ideal corrector on each API server.
func (b *bench) setUp(ctx, watchCtx context.Context) error {
	for i, cs := range b.Clientsets {
		obs := measure.NewObserver()
		if err := obs.Start(watchCtx, cs, fleetLabel); err != nil {
			return err
		}
		idealCfg := rest.CopyConfig(b.Fleet.Targets[i].RESTConfig())
		idealCfg.QPS, idealCfg.Burst = -1, 0
		idealCS, err := kubernetes.NewForConfig(idealCfg)
		if err != nil {
			return fmt.Errorf("building the ideal corrector's client: %w", err)
		}
		ideal := measure.NewIdeal(idealCS, fleetLabel, byIdeal, map[string]string{"rev": "1"})
		if err := ideal.Start(watchCtx); err != nil {
			return err
		}
		if err := ideal.Deploy(ctx, idealNamespace, b.configMapNames()); err != nil {
			return err
		}
		b.obs, b.ideals = append(b.obs, obs), append(b.ideals, ideal)
	}
	return nil
}

// manifests is the template at revision rev: ConfigMaps, two Secrets and a ServiceAccount, each in
// the namespace named after the cluster.
func (b *bench) manifests(rev int) string {
	return measure.SimManifests(b.configMapNames(), rev, fleetLabel, byHoldfast)
}

// createTemplate creates the template at revision 1, a Go template (each object's namespace is
// the cluster's name), and with -bystander the bystander's copy of it.
func (b *bench) createTemplate(ctx context.Context) error {
	names := []string{templateName}
	if b.bystander != "" {
		names = append(names, bystanderSet)
	}
	for _, name := range names {
		if err := b.CreateTemplate(ctx, templateNamespace, name, b.manifests(1), measure.GoTemplate); err != nil {
			return err
		}
	}
	return nil
}

// createServiceSet creates the service set of the simulated fleet, and with -bystander the
// bystander's (fleetSelector and bystanderSelector keep them apart).
func (b *bench) createServiceSet(ctx context.Context) error {
	sets := map[string]metav1.LabelSelector{setName: fleetSelector(b.bystander != "")}
	if b.bystander != "" {
		sets[bystanderSet] = bystanderSelector()
	}
	for name, selector := range sets {
		template := templateName
		if name == bystanderSet {
			template = bystanderSet
		}
		err := b.CreateSimServiceSet(ctx, name, holdfastv1.TemplateReference{Name: template, Namespace: templateNamespace}, func(mcs *holdfastv1.MultiClusterService) {
			mcs.Spec.ClusterSelector.LabelSelector = selector
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// edits makes up to n rounds of one edit for each corrector (Holdfast's on a random simulated
// cluster, then the ideal's of the same ConfigMap name on the same API server), one at a time,
// and stops early when done is closed.
func (b *bench) edits(ctx context.Context, n int, done <-chan struct{}) (holdfast, ideal []*measure.EditRun) {
	names := b.configMapNames()
	for seq := range n {
		select {
		case <-done:
			return holdfast, ideal
		default:
		}
		if ctx.Err() != nil {
			return holdfast, ideal
		}
		sim := b.Sims[b.rng.IntN(len(b.Sims))]
		if b.bystander != "" {
			sim = b.bystander
		}
		name := names[b.rng.IntN(len(names))]
		k := b.Server[sim]
		holdfast = append(holdfast, measure.Edit(ctx, b.Clientsets[k], b.obs[k], editor, sim, name, seq, b.cfg.correctTimeout))
		time.Sleep(b.cfg.gap)
		ideal = append(ideal, measure.Edit(ctx, b.Clientsets[k], b.obs[k], editor, idealNamespace, name, seq, b.cfg.correctTimeout))
		time.Sleep(b.cfg.gap)
	}
	return holdfast, ideal
}

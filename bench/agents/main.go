// Command agents measures what Pull mode takes off the hub (issue 30): the same simulated fleet
// run once in Push mode (the hub controller applies to every cluster) and once in Pull mode (an
// agent per cluster applies, the hub only renders and publishes), on a fresh fleet each, in one
// run of this program:
//
//   - a hub and -servers (3) target API servers; -clusters (1000) simulated clusters on them,
//     round robin, each the namespace sim-NNNN on its server reached with credentials of its
//     own limited to that namespace (measure.SimFleet). In Push mode each is registered on the
//     hub with that kubeconfig; in Pull mode none is: each is registered as a Pull Cluster
//     (onboard.RegisterPull, as `holdfast cluster add --pull` does: its own hub namespace,
//     ServiceAccount, RBAC and bootstrap token), and its agent runs with only that cluster's
//     kubeconfig and its bootstrap token, trading it for its own hub identity. The agents all
//     run in one process of their own (this program again, with -agents-spec), so that this
//     process holds the hub controller alone;
//   - the hub controller in this process (controller.NewManager, every request it sends counted)
//     until every Cluster is Ready (in Pull mode: its agent reports);
//   - the ideal, alone, before Holdfast's: in Push mode the template's objects sent to every
//     cluster as one forced server-side apply each (measure.SimFleet.IdealRollout); in Pull mode
//     the same, after publishing each cluster's objects on the hub as one Secret in its
//     namespace (one forced apply each): publish + the same applies, the ideal loop;
//   - in Pull mode, after it, the pull floor, the least any pull-mode drift controller must do
//     (measure.IdealAgents, as the ideal controller is Push mode's in bench/fleet1000): an ideal
//     agent per cluster in this process, its watches open before (one on the hub of its own
//     Secret, one label-selected one of its objects on its cluster); each cluster's objects
//     published in its Secret (one forced apply each), each agent applying them as it sees its
//     Secret change (the same forced applies) and writing one status on the hub; timed from the
//     start of publishing until the last status was written;
//   - first rollout: one inline template of -objects (10) objects per cluster and one service
//     set selecting the fleet; time until every status object is Ready in sync;
//   - the hub controller's Go heap and RSS after it (this process's, minus a baseline taken
//     before the controller was built), the agents' process's RSS;
//   - idle: -idle (1m) with nothing changing: every request the hub API server served
//     (apiserver_request_total, all clients: the controller's and, in Pull mode, the agents'
//     heartbeats and token renewals), what the target API servers served (the controller's
//     probes and watches in Push mode, the agents' in Pull mode) and the controller's own
//     requests;
//   - template change: the ideal of revision 2 alone (and in Pull mode the pull floor), then the
//     template changes; time until every status object is Ready in sync with a new revision, and
//     what the hub API server served meanwhile (writes per cluster: the projection's "writes per
//     rollout").
//
// It prints per mode the figures and the table of Pull against Push: rollout and template change
// ÷ their ideal, hub controller RSS, hub requests per idle minute (goal: a template change in
// Pull mode ≤ 1.5× its ideal loop, the hub's memory in Pull mode at most a third of Push mode's),
// and for information a template change in Pull mode ÷ the pull floor.
//
// Usage: go run ./bench/agents [-clusters 1000] [-servers 3] [-objects 10] [-modes pull,push]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/measure"
)

const (
	templateNamespace = "bench"
	templateName      = "fleet"
	setName           = "fleet"
	// goalChange and goalMemory are the goals: a template change in Pull mode ≤ 1.5×
	// its ideal loop, the hub's memory at most a third of Push mode's.
	goalChange = 1.5
	goalMemory = 1.0 / 3
)

type config struct {
	clusters, servers, objects int
	modes                      []string
	concurrency                int
	hubQPS                     float64
	idle, settle, timeout      time.Duration
	memoryLimit                int64
	// hubChangeProfile is a file for a CPU profile of the hub's API server during the first 30 s
	// of each mode's template change (the mode's name is added before its extension).
	hubChangeProfile string
	// agentsInProcess runs the agents in this process (the smoke test: its binary is not this
	// program).
	agentsInProcess bool
}

func main() {
	// Pull first: the hub controller's memory in Push mode, which this process keeps more of,
	// is then not counted in Pull mode's baseline.
	cfg := config{modes: []string{"pull", "push"}}
	var spec string
	flag.StringVar(&spec, "agents-spec", "", "run the agents of this `file` (the agents' process this program starts in Pull mode)")
	flag.IntVar(&cfg.clusters, "clusters", 1000, "simulated clusters")
	flag.IntVar(&cfg.servers, "servers", 3, "target API servers the simulated clusters share")
	flag.IntVar(&cfg.objects, "objects", 10, "objects per cluster (ConfigMaps, 2 Secrets, a ServiceAccount)")
	flag.Func("modes", "the `modes` to measure, in order (default pull,push)", func(v string) error {
		cfg.modes = nil
		for m := range strings.SplitSeq(v, ",") {
			if m != "push" && m != "pull" {
				return fmt.Errorf("%q is neither push nor pull", m)
			}
			cfg.modes = append(cfg.modes, m)
		}
		return nil
	})
	flag.IntVar(&cfg.concurrency, "concurrency", 10, "the hub controller's workers, and the ideal's")
	flag.Float64Var(&cfg.hubQPS, "hub-qps", 0, "the controller's hub client rate limit (--hub-qps); 0 leaves the controller's default (none)")
	flag.DurationVar(&cfg.idle, "idle", time.Minute, "the idle window")
	flag.DurationVar(&cfg.settle, "settle", 10*time.Second, "wait after the rollout before the idle window")
	flag.DurationVar(&cfg.timeout, "timeout", 20*time.Minute, "how long to wait for the fleet, a rollout or a template change")
	flag.Int64Var(&cfg.memoryLimit, "memory-limit", 1<<30, "the hub controller's memory limit in bytes, as the chart's (the Go memory limit is 90% of it above this process's baseline); 0 sets none")
	flag.StringVar(&cfg.hubChangeProfile, "hub-change-cpu-profile", "", "write a CPU profile of the hub's API server during the first 30 s of each mode's template change to this `file`, the mode's name added before its extension")
	measure.ParseFlags(measure.AtLeast("clusters", 1), measure.AtLeast("servers", 1), measure.AtLeast("objects", 4), measure.AtLeast("concurrency", 1))
	if spec != "" {
		measure.Main(func(ctx context.Context) error { return runAgents(ctx, spec) })
		return
	}
	measure.Main(func(ctx context.Context) error { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg config) error {
	began := time.Now()
	fmt.Printf("Machine: %s\n\n", measure.Machine())
	fmt.Printf("%d simulated clusters on %d API servers, %d objects each, %d hub controller workers; modes %v, each on a fresh fleet.\n\n",
		cfg.clusters, cfg.servers, cfg.objects, cfg.concurrency, cfg.modes)
	results := map[string]*result{}
	for _, mode := range cfg.modes {
		r, err := measureMode(ctx, cfg, mode)
		if err != nil {
			return fmt.Errorf("%s mode: %w", mode, err)
		}
		r.print()
		results[mode] = r
	}
	printComparison(cfg, results)
	fmt.Printf("Run time: %s (load average at the end: %s).\n", measure.Seconds(time.Since(began)), measure.LoadAverage())
	return nil
}

// bench is one mode's fleet.
type bench struct {
	*measure.SimFleet
	cfg    config
	pull   bool
	scheme *runtime.Scheme
	// hubCS is this program's unlimited admin clientset of the hub.
	hubCS kubernetes.Interface
	// agents are the agents in Pull mode: their process, or this one (agentsInProcess).
	agents *agentsProcess
}

func measureMode(ctx context.Context, cfg config, mode string) (_ *result, retErr error) {
	r := &result{mode: mode, n: cfg.clusters}
	fmt.Fprintf(os.Stderr, "%s mode: starting a hub and %d API servers, %d clusters\n", mode, cfg.servers, cfg.clusters)
	f, err := measure.StartSimFleet(ctx, measure.SimFleetOptions{Servers: cfg.servers, Clusters: cfg.clusters, Pull: mode == "pull"})
	if err != nil {
		return nil, err
	}
	defer func() { retErr = errors.Join(retErr, f.Stop()) }()
	b := &bench{SimFleet: f, cfg: cfg, pull: mode == "pull"}
	if b.scheme, err = controller.Scheme(); err != nil {
		return nil, err
	}
	hubCfg := rest.CopyConfig(f.Fleet.Hub.RESTConfig())
	hubCfg.QPS, hubCfg.Burst = -1, 0
	if b.hubCS, err = kubernetes.NewForConfig(hubCfg); err != nil {
		return nil, err
	}
	f.StatusesEverywhere = b.pull

	// The mode before may have left memory to this process and its peak: give the memory back
	// and start the peak again (Linux: 5 in clear_refs resets VmHWM).
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	heap0, rss0, err := measure.SelfMemory()
	if err != nil {
		return nil, err
	}
	if cfg.memoryLimit > 0 {
		debug.SetMemoryLimit(rss0 + cfg.memoryLimit*9/10)
		defer debug.SetMemoryLimit(math.MaxInt64)
	}
	if err := f.StartController(ctx, float32(cfg.hubQPS), controller.Options{Concurrency: cfg.concurrency, SkipNameValidation: true}); err != nil {
		return nil, err
	}
	if b.pull {
		if r.agents, err = b.startPull(ctx); err != nil {
			return nil, err
		}
		defer func() { retErr = errors.Join(retErr, r.agents.stop()) }()
	}
	if err := b.waitClustersReady(ctx); err != nil {
		return nil, err
	}
	r.clustersReady = time.Since(f.Started)
	fmt.Fprintf(os.Stderr, "%s mode: every Cluster Ready %s after the controller started\n", mode, r.clustersReady.Round(time.Millisecond))

	if r.idealRollout, err = b.ideal(ctx, 1); err != nil {
		return nil, err
	}
	if b.pull {
		if r.floorRollout, err = b.pullFloor(ctx, 1); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "%s mode: pull floor's rollout in %s\n", mode, r.floorRollout.took.Round(time.Millisecond))
	}
	if err := b.CreateTemplate(ctx, templateNamespace, templateName, b.manifests(1), measure.GoTemplate); err != nil {
		return nil, err
	}
	for _, s := range b.Sims {
		f.Statuses[statusName(s)] = s
	}
	f.Counter.Reset()
	cpu0 := b.cpu()
	created := time.Now()
	if err := b.CreateSimServiceSet(ctx, setName, templateRef()); err != nil {
		return nil, err
	}
	if _, err := f.WaitStatuses(ctx, cfg.timeout, measure.ReadyInSync(cfg.objects)); err != nil {
		return nil, fmt.Errorf("waiting for the first rollout: %w", err)
	}
	r.rollout, r.rolloutCPU = time.Since(created), b.cpu().minus(cpu0)
	r.rolloutRequests = f.Counter.Reset()
	if r.heap, r.rss, err = measure.SelfMemory(); err != nil {
		return nil, err
	}
	r.heap, r.rss = r.heap-heap0, r.rss-rss0
	if r.agents != nil {
		r.agentsRSS, _ = measure.RSS(r.agents.pid())
	}
	fmt.Fprintf(os.Stderr, "%s mode: rolled out in %s, hub controller RSS +%s\n", mode, r.rollout.Round(time.Millisecond), measure.MiB(r.rss))

	time.Sleep(cfg.settle)
	f.Counter.WaitQuiet(time.Second, time.Minute)
	fmt.Fprintf(os.Stderr, "%s mode: idle for %s\n", mode, cfg.idle)
	before, err := scrapeServed(ctx, b.hubCS)
	if err != nil {
		return nil, err
	}
	targetsBefore, err := b.scrapeTargets(ctx)
	if err != nil {
		return nil, err
	}
	f.Counter.Reset()
	time.Sleep(cfg.idle)
	after, err := scrapeServed(ctx, b.hubCS)
	if err != nil {
		return nil, err
	}
	targetsAfter, err := b.scrapeTargets(ctx)
	if err != nil {
		return nil, err
	}
	r.idleServed, r.idleController, r.idleWindow = after.minus(before), f.Counter.Reset(), cfg.idle
	r.idleTargets = minusEachOf(targetsAfter, targetsBefore)

	revisions, err := b.ServiceRevisions(ctx)
	if err != nil {
		return nil, err
	}
	if r.idealChange, err = b.ideal(ctx, 2); err != nil {
		return nil, err
	}
	if b.pull {
		if r.floorChange, err = b.pullFloor(ctx, 2); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "%s mode: pull floor's template change in %s\n", mode, r.floorChange.took.Round(time.Millisecond))
	}
	servedBefore, latenciesBefore, err := scrapeHub(ctx, b.hubCS)
	if err != nil {
		return nil, err
	}
	changeTargetsBefore, err := b.scrapeTargets(ctx)
	if err != nil {
		return nil, err
	}
	published, err := b.newPublications(ctx)
	if err != nil {
		return nil, err
	}
	if err := b.ChangeTemplate(ctx, templateNamespace, templateName, b.manifests(2)); err != nil {
		return nil, err
	}
	reconciles0, err := gatherReconcileTimes()
	if err != nil {
		return nil, err
	}
	agentReconciles0, err := b.agentReconciles(ctx)
	if err != nil {
		return nil, err
	}
	waitHubProfile := f.StartHubCPUProfile(ctx, modeFile(cfg.hubChangeProfile, mode), 30)
	cpu0 = b.cpu()
	changed := time.Now()
	done, err := f.WaitStatuses(ctx, cfg.timeout, func(css *holdfastv1.ClusterServiceStatus) bool {
		published.see(css)
		return measure.ReadyInSync(cfg.objects)(css) && len(css.Status.Services) == 1 && css.Status.Services[0].Revision != revisions[css.Name]
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the template change: %w", err)
	}
	r.change, r.changeCPU = time.Since(changed), b.cpu().minus(cpu0)
	if err := waitHubProfile(); err != nil {
		return nil, err
	}
	reconciles, err := gatherReconcileTimes()
	if err != nil {
		return nil, err
	}
	r.changeReconciles = reconciles.minus(reconciles0)
	agentReconciles, err := b.agentReconciles(ctx)
	if err != nil {
		return nil, err
	}
	r.changeAgentReconciles = agentReconciles.minus(agentReconciles0)
	if b.pull {
		r.changeTimeline = published.timeline(changed, done)
	}
	r.changeRequests = f.Counter.Reset()
	servedAfter, latencies, err := scrapeHub(ctx, b.hubCS)
	if err != nil {
		return nil, err
	}
	r.changeServed = servedAfter.minus(servedBefore)
	r.changeSlowest = slowest(latenciesBefore, latencies, 8)
	changeTargets, err := b.scrapeTargets(ctx)
	if err != nil {
		return nil, err
	}
	r.changeTargets = minusEachOf(changeTargets, changeTargetsBefore)
	if peak, err := measure.PeakRSS(os.Getpid()); err == nil {
		r.peakRSS = peak - rss0
	}
	if r.agents != nil {
		r.agentsPeakRSS, _ = measure.PeakRSS(r.agents.pid())
		r.agentRestarts = countRestarts(r.agents.log)
	}
	return r, nil
}

// modeFile is path with mode before its extension ("" stays "").
func modeFile(path, mode string) string {
	if path == "" {
		return ""
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + mode + ext
}

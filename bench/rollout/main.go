// Command rollout measures a progressive rollout (issue 15): how long a template change takes to
// go through a simulated fleet wave by wave (MultiClusterService spec.rollout), per wave and in
// total, and what the waves cost over the same change sent to every cluster at once. Both, and
// an ideal apply floor, are measured in the same run on the same API servers, one after the
// other, so that the machine's load is the same for each.
//
// On one fleet:
//
//   - it starts a hub and -servers (3) target API servers and -waves (5,15,30,50: 100) simulated
//     clusters on them, round robin (measure.StartSimFleet, as bench/fleet1000: each a namespace
//     reached with its own credentials); the clusters of wave i are labelled
//     bench.holdfast.dev/wave=wNN (in order of their names, so each wave is spread over the API
//     servers), and the controller runs in this process (-concurrency workers, every request
//     counted);
//   - two service sets, each one inline ServiceTemplate of -objects (20) ConfigMaps per cluster
//     (in the cluster's namespace, named after the set) in ContinuousWithDriftDetection mode,
//     selecting every simulated cluster: "waves", with spec.rollout {waveLabel:
//     bench.holdfast.dev/wave, maxInFlight: -max-in-flight (100%), pauseBetweenWaves: -pause (0)},
//     and "all", without spec.rollout: its changes go to every cluster at once. It waits until
//     both are deployed (a first revision goes everywhere at once, with or without waves);
//   - then -rounds (1) rounds, each of four changes, one at a time, each after the controller was
//     quiet for a second:
//     1. ideal, at once: the template's ConfigMaps at a new revision, renamed ideal-… and without
//     the labels this program's and the controller's watches select, sent to every cluster's
//     namespace as one forced server-side apply each by -concurrency workers through the API
//     servers' admin clients (measure.SimFleet.IdealRollout), until the last apply returned: the
//     floor of a change on these API servers;
//     2. baseline: the "all" template's data.rev changes; time until this program's watches of
//     the targets saw every cluster's ConfigMaps at the new revision, and until every status
//     object of the set was Ready in sync at the new revision (from a watch on the hub);
//     3. ideal, in waves: as 1, one wave after the other (each wave's applies all returned before
//     the next starts): the floor of a change that goes wave by wave, with no time spent waiting
//     for health;
//     4. waves: the "waves" template's data.rev changes; per wave, from the change: when
//     status.rollout.wave reached it (the wave started), when its first and last cluster had
//     every ConfigMap at the new revision on the target (applied), when every one of its status
//     objects was Ready in sync at it, and when status.rollout.waves[i] reported every cluster
//     healthy; and the total, until status.rollout.phase was Complete at the new revision.
//
// It prints per round the four totals, the waves' table (each wave's times from the change and
// its own length, from its start until reported healthy, beside the ideal's wave), the overhead
// of the waves over the baseline (difference and ratio), and the controller's requests and the CPU
// time of this process, the hub and the targets during each change; then, with more than one
// round, the totals' min/median/max. Times on the hub are when this program's watch delivered
// the change, on the targets when its ConfigMap watches did: they include that delivery. The
// controller records its own startTime and completionTime in status.rollout, but to the second.
//
// Usage: go run ./bench/rollout [-waves 5,15,30,50] [-servers 3] [-objects 20] [-max-in-flight 100%] [-pause 0s] [-rounds 1]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/measure"
)

const (
	// setLabel marks each set's ConfigMaps with the set's name: this program's watches select it.
	setLabel = "bench.holdfast.dev/set"
	// revKey is the ConfigMaps' data key that carries the template's revision.
	revKey = "rev"
	// waveLabel puts each simulated Cluster in its wave.
	waveLabel = "bench.holdfast.dev/wave"
	// templateNamespace holds the templates on the hub.
	templateNamespace = "bench"
	// wavesSet rolls out in waves; allSet, the baseline, everywhere at once.
	wavesSet = "waves"
	allSet   = "all"
)

type config struct {
	waves            []int
	servers, objects int
	concurrency      int
	rounds           int
	// maxInFlight is parsed from maxInFlightFlag.
	maxInFlight     intstr.IntOrString
	maxInFlightFlag string
	pause           time.Duration
	hubQPS          float64
	settle, timeout time.Duration
}

func main() {
	cfg := config{waves: []int{5, 15, 30, 50}}
	flag.Func("waves", "the waves' sizes in clusters, in order, comma-separated (default 5,15,30,50): their sum is the number of simulated clusters", func(v string) error {
		var err error
		cfg.waves, err = parseWaves(v)
		return err
	})
	flag.IntVar(&cfg.servers, "servers", 3, "target API servers the simulated clusters share")
	flag.IntVar(&cfg.objects, "objects", 20, "ConfigMaps per cluster in each service set")
	flag.IntVar(&cfg.concurrency, "concurrency", 10, "the controller's workers (controller.Options.Concurrency), and the ideal's")
	flag.IntVar(&cfg.rounds, "rounds", 1, "rounds of the four changes (ideal at once, baseline, ideal in waves, waves)")
	flag.StringVar(&cfg.maxInFlightFlag, "max-in-flight", "100%", "spec.rollout.maxInFlight: a number of clusters or a percentage of each wave's")
	flag.DurationVar(&cfg.pause, "pause", 0, "spec.rollout.pauseBetweenWaves")
	flag.Float64Var(&cfg.hubQPS, "hub-qps", 0, "the controller's hub client rate limit; 0 leaves NewManager's default (50/s), -1 turns it off")
	flag.DurationVar(&cfg.settle, "settle", 2*time.Second, "wait after each change before the next (then until the controller was quiet for a second)")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "how long to wait for the fleet, a deployment or a change")
	measure.ParseFlags(measure.AtLeast("servers", 1), measure.AtLeast("objects", 1), measure.AtLeast("concurrency", 1), measure.AtLeast("rounds", 1))
	cfg.maxInFlight = intstr.Parse(cfg.maxInFlightFlag)
	if _, err := intstr.GetScaledValueFromIntOrPercent(&cfg.maxInFlight, 100, true); err != nil || cfg.maxInFlightFlag == "" {
		fmt.Fprintf(os.Stderr, "Error: -max-in-flight %q is neither a number nor a percentage\n", cfg.maxInFlightFlag)
		os.Exit(2)
	}
	measure.Main(func(ctx context.Context) error { return run(ctx, cfg) })
}

func parseWaves(v string) ([]int, error) {
	sizes, err := measure.ParseClusterCounts(v)
	if err != nil {
		return nil, err
	}
	if len(sizes) > 32 {
		return nil, errors.New("at most 32 waves (spec.rollout allows 33 wave statuses)")
	}
	return sizes, nil
}

// clusters is the number of simulated clusters: the waves' sizes added up.
func (c config) clusters() int {
	n := 0
	for _, w := range c.waves {
		n += w
	}
	return n
}

// waveOf is the index of the wave of the i-th simulated cluster.
func (c config) waveOf(i int) int {
	for w, size := range c.waves {
		if i < size {
			return w
		}
		i -= size
	}
	return len(c.waves) - 1
}

func waveValue(w int) string { return fmt.Sprintf("w%02d", w+1) }

func run(ctx context.Context, cfg config) (retErr error) {
	began := time.Now()
	fmt.Printf("Machine: %s\n\n", measure.Machine())
	n := cfg.clusters()
	fmt.Printf("%d simulated clusters on %d API servers in %d waves of %v, %d ConfigMaps per cluster and set, maxInFlight %s, pauseBetweenWaves %s, %d controller workers, %d round(s).\n\n",
		n, cfg.servers, len(cfg.waves), cfg.waves, cfg.objects, cfg.maxInFlight.String(), cfg.pause, cfg.concurrency, cfg.rounds)

	fmt.Fprintf(os.Stderr, "starting a hub and %d API servers\n", cfg.servers)
	f, err := measure.StartSimFleet(ctx, measure.SimFleetOptions{Servers: cfg.servers, Clusters: n,
		Labels: func(i int) map[string]string { return map[string]string{waveLabel: waveValue(cfg.waveOf(i))} }})
	if err != nil {
		return err
	}
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer func() {
		stopWatches()
		retErr = errors.Join(retErr, f.Stop())
	}()
	b := &bench{SimFleet: f, cfg: cfg, arrivals: newArrivals(cfg.objects)}
	for i, s := range b.Sims {
		b.waves = growTo(b.waves, cfg.waveOf(i)+1)
		b.waves[cfg.waveOf(i)] = append(b.waves[cfg.waveOf(i)], s)
	}
	for _, cs := range b.Clientsets {
		if err := b.arrivals.start(watchCtx, cs); err != nil {
			return err
		}
	}
	setup := time.Since(began)

	if err := b.StartController(ctx, float32(cfg.hubQPS), controller.Options{Concurrency: cfg.concurrency, SkipNameValidation: true}); err != nil {
		return err
	}
	if err := b.WaitClustersReady(ctx, cfg.timeout); err != nil {
		return err
	}
	ready := time.Since(b.Started)
	fmt.Fprintf(os.Stderr, "%d clusters: all Ready %s after the controller started\n", n, ready.Round(time.Millisecond))

	deployed, err := b.deploy(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "both sets deployed in %s\n", deployed.Round(time.Millisecond))
	t := measure.NewTable("setup", "time")
	t.Row("hub, API servers, simulated clusters registered", measure.Seconds(setup))
	t.Row("controller start until every Cluster is Ready", measure.Seconds(ready))
	t.Row(fmt.Sprintf("both sets' first revision (2 × %d ConfigMaps per cluster) until every status object is Ready in sync", cfg.objects), measure.Seconds(deployed))
	fmt.Println(t.String())

	var rounds []*round
	for k := range cfg.rounds {
		r, err := b.round(ctx, k+2)
		if err != nil {
			return fmt.Errorf("round %d: %w", k+1, err)
		}
		r.print(k+1, b.waves, b.Names)
		rounds = append(rounds, r)
	}
	if len(rounds) > 1 {
		printSummary(rounds)
	}
	fmt.Printf("Run time: %s (load average at the end: %s).\n", measure.Seconds(time.Since(began)), measure.LoadAverage())
	return nil
}

func growTo[T any](s []T, n int) []T {
	for len(s) < n {
		var zero T
		s = append(s, zero)
	}
	return s
}

// sorted returns the durations of at since start, sorted.
func sorted(at map[string]time.Time, start time.Time) []time.Duration {
	var ds []time.Duration
	for _, t := range at {
		ds = append(ds, t.Sub(start))
	}
	slices.Sort(ds)
	return ds
}

// Command pull measures the correction latency of a Pull cluster's agent against an ideal
// corrector on the same cluster (issue 30: p50 within 1.5× and p99 within 2× of the ideal's: the
// agent is local, no hub round trip is on its correction path), and, with -outage, what happens
// to drift made while the hub's API server is stopped (corrected at the same latency, recorded
// on the hub within 30 s of its return, none lost).
//
// It starts two control planes, a hub and the Pull cluster "edge" (package sandbox), the Holdfast
// controller on the hub in this process, registers edge with onboard.RegisterPull (as `holdfast
// cluster add --pull` does) and runs its agent in this process (agent.Run) with only edge's own
// kubeconfig: the hub has none. Then:
//
//   - a MultiClusterService in ContinuousWithDriftDetection mode deploys -objects (50) ConfigMaps
//     into bench-pull on edge, labelled bench=holdfast; the ideal corrector of package measure
//     (one label-selected watch, one forced server-side apply per change) deploys the same
//     ConfigMaps into bench-ideal, labelled bench=ideal, on the same API server;
//   - -edits (40) rounds of one out-of-band edit each (an Update of data.value, as field manager
//     bench-editor), first the agent's object, then the ideal's, ConfigMaps in a random order
//     (-seed). Each edit waits for its correction, seen by this program's own watch on edge
//     (measure.Observer), then -gap (150ms);
//   - with -outage (a duration, 0 for none), the hub's API server is stopped for that long; the
//     same rounds run meanwhile (as many as fit, at most -edits), and once it is back this
//     program waits until every edit made during the outage is in the status object's drift
//     records on the hub, and reports how long after the API server answered again the last
//     one arrived, and how many never did.
//
// It prints the machine, both correctors' latencies (n, min, p50, p90, p99, max), the ratios of
// the agent's p50 and p99 to the ideal's, and the goal lines.
//
// Usage: go run ./bench/pull [-objects 50] [-edits 40] [-outage 5m]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/measure"
)

const (
	editor = "bench-editor"
	// pullNamespace and idealNamespace hold the agent's and the ideal's ConfigMaps on edge.
	pullNamespace, idealNamespace = "bench-pull", "bench-ideal"
	label                         = "bench"
	// goalP50 and goalP99 are the goals: the agent's p50 and p99 within these factors of
	// the ideal's.
	goalP50, goalP99 = 1.5, 2.0
	// recordGoal is how soon after the hub's return every record of the outage must be there.
	recordGoal = 30 * time.Second
)

type options struct {
	objects, edits int
	seed           uint64
	gap, outage    time.Duration
}

func main() {
	o := options{}
	flag.IntVar(&o.objects, "objects", 50, "ConfigMaps each corrector manages")
	flag.IntVar(&o.edits, "edits", 40, "rounds of one edit of each corrector's objects")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the order the ConfigMaps are edited in")
	flag.DurationVar(&o.gap, "gap", 150*time.Millisecond, "wait after each correction before the next edit")
	flag.DurationVar(&o.outage, "outage", 0, "stop the hub's API server this long, editing meanwhile; 0 for no outage")
	measure.ParseFlags(measure.AtLeast("objects", 1), measure.AtLeast("edits", 1))
	measure.Main(func(ctx context.Context) error { return run(ctx, o) })
}

func run(ctx context.Context, o options) (err error) {
	fmt.Printf("Machine: %s\n\n", measure.Machine())
	f, err := startPullFleet(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.stop()) }()
	names := make([]string, o.objects)
	for i := range names {
		names[i] = fmt.Sprintf("cm-%d", i)
	}
	obs := measure.NewObserver()
	if err := obs.Start(ctx, f.edgeCS, label); err != nil {
		return err
	}
	if err := f.deploy(ctx, names); err != nil {
		return err
	}
	if err := obs.WaitCount(ctx, pullNamespace, len(names), 2*time.Minute); err != nil {
		return fmt.Errorf("the agent's ConfigMaps: %w", err)
	}
	ideal := measure.NewIdeal(f.idealCS, label, "ideal", nil)
	if err := ideal.Start(ctx); err != nil {
		return err
	}
	if err := ideal.Deploy(ctx, idealNamespace, names); err != nil {
		return err
	}
	if err := obs.WaitCount(ctx, idealNamespace, len(names), time.Minute); err != nil {
		return fmt.Errorf("the ideal's ConfigMaps: %w", err)
	}
	fmt.Fprintf(os.Stderr, "Deployed %d ConfigMaps each; load average %s\n", len(names), measure.LoadAverage())
	time.Sleep(5 * time.Second)

	rounds := &editRounds{o: o, names: names, rng: rand.New(rand.NewPCG(o.seed, 0)), obs: obs, cs: f.editCS}
	agentRuns, idealRuns := rounds.run(ctx, o.edits, nil)
	report("hub up", agentRuns, idealRuns, ideal)
	if o.outage > 0 {
		return f.outage(ctx, o, rounds, ideal)
	}
	return nil
}

// editRounds edits the two correctors' ConfigMaps in turn.
type editRounds struct {
	o     options
	names []string
	rng   *rand.Rand
	order []int
	seq   int
	obs   *measure.Observer
	cs    kubernetes.Interface
}

// run performs up to n rounds, fewer if until returns true first, and returns the edits of each.
func (r *editRounds) run(ctx context.Context, n int, until func() bool) (agentRuns, idealRuns []*measure.EditRun) {
	for i := 0; i < n && ctx.Err() == nil && (until == nil || !until()); i++ {
		if len(r.order) == 0 {
			r.order = r.rng.Perm(len(r.names))
		}
		name := r.names[r.order[0]]
		r.order = r.order[1:]
		r.seq++
		agentRuns = append(agentRuns, measure.Edit(ctx, r.cs, r.obs, editor, pullNamespace, name, r.seq, 30*time.Second))
		time.Sleep(r.o.gap)
		idealRuns = append(idealRuns, measure.Edit(ctx, r.cs, r.obs, editor, idealNamespace, name, r.seq, 30*time.Second))
		time.Sleep(r.o.gap)
	}
	return agentRuns, idealRuns
}

// report prints both correctors' latencies and the goals.
func report(phase string, agentRuns, idealRuns []*measure.EditRun, ideal *measure.Ideal) {
	a, aFailed, aLost := measure.Latencies(agentRuns)
	i, iFailed, iLost := measure.Latencies(idealRuns)
	t := measure.NewTable(measure.LatencyHeader("correction latency, " + phase)...)
	t.LatencyRow("the Pull cluster's agent", a)
	t.LatencyRow("ideal corrector, same cluster", i)
	fmt.Println(t.String())
	fmt.Printf("edits failed / not seen corrected: agent %d / %d, ideal %d / %d; ideal failures: %s\n\n", aFailed, aLost, iFailed, iLost, ideal.Failures())
	if len(a) == 0 || len(i) == 0 {
		fmt.Println("no latencies to compare")
		return
	}
	p50 := float64(measure.Percentile(a, 50)) / float64(measure.Percentile(i, 50))
	p99 := float64(measure.Percentile(a, 99)) / float64(measure.Percentile(i, 99))
	fmt.Printf("%s: agent p50 / ideal p50 = %.2f (goal <= %.1f: %s); agent p99 / ideal p99 = %.2f (goal <= %.1f: %s)\n\n",
		phase, p50, goalP50, met(p50 <= goalP50), p99, goalP99, met(p99 <= goalP99))
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// statusKey is the status object of the benchmark's service set on edge.
func (f *pullFleet) statusKey() types.NamespacedName {
	return client.ObjectKey{Namespace: f.ns, Name: statusName}
}

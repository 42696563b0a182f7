// Command preview measures the preview of a rollout revision on a simulated fleet (issue 31):
// how long a template change takes to be previewed on every cluster of a service set whose
// spec.rollout.approval is Manual — rendered for each cluster, server-side dry-run applied there
// and diffed with what is live, then summarised, grouped, on the service set — against an ideal
// loop of the same server-side dry-run applies measured in the same run on the same API servers;
// how large the service set's status is then; and how long `holdfast diff` takes to print the
// grouped summary from it.
//
// On one fleet (measure.StartSimFleet, as bench/fleet1000's: -servers API servers, -clusters
// simulated clusters, each a namespace reached with its own credentials):
//
//   - the controller runs in this process (-concurrency workers); one inline ServiceTemplate of
//     -objects (20) objects per cluster (ConfigMaps, two Secrets, a ServiceAccount) and one
//     MultiClusterService in ContinuousWithDriftDetection mode with spec.rollout {approval:
//     Manual} selecting every simulated cluster; its first revision goes out at once, and the
//     program waits until every status object is Ready in sync;
//   - then -rounds (3) rounds, each after the controller was quiet for a second:
//     1. ideal: the template's objects at the round's revision sent to every cluster's
//     namespace as one forced server-side apply each with dryRun=All, under Holdfast's field
//     manager, by -concurrency workers through the API servers' admin clients
//     (measure.SimFleet.IdealDryRun), until the last one returned: the floor of a preview on
//     these API servers (nothing read, diffed or recorded);
//     2. Holdfast: the template's data.rev changes; time until the service set's status.rollout
//     says Previewed with every cluster counted (what `holdfast diff` and `holdfast rollout
//     approve` read; polled, this program watches no status object); the controller's requests
//     and the CPU time of this process, the hub and the targets;
//     3. the size of the service set's status (and of status.rollout.preview) as stored, and
//     `holdfast diff SET` run -diff-runs (3) times as a process against the hub (the binary
//     built once at the start): its wall time, from start to exit, each.
//
// Nothing is approved: every round previews a new revision against the first, which stays
// deployed.
//
// Usage: go run ./bench/preview [-clusters 1000] [-servers 3] [-objects 20] [-rounds 3] [-cpu-profile file]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fieldset"
	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/naming"
)

const (
	templateNamespace = "bench"
	setName           = "preview"
	// goalRatio, goalStatus and goalDiff are the goals.
	goalRatio  = 1.5
	goalStatus = 64 << 10
	goalDiff   = 2 * time.Second
)

type config struct {
	clusters, servers, objects int
	concurrency, rounds        int
	diffRuns                   int
	hubQPS                     float64
	timeout                    time.Duration
	// holdfast is the binary `holdfast diff` runs from; built when empty.
	holdfast string
	// cpuProfile, if set, is where the first round's preview is profiled.
	cpuProfile string
}

func main() {
	cfg := config{}
	flag.IntVar(&cfg.clusters, "clusters", 1000, "simulated clusters")
	flag.IntVar(&cfg.servers, "servers", 3, "target API servers the simulated clusters share")
	flag.IntVar(&cfg.objects, "objects", 20, "objects per cluster (ConfigMaps, 2 Secrets, a ServiceAccount)")
	flag.IntVar(&cfg.concurrency, "concurrency", 10, "the controller's workers (controller.Options.Concurrency), and the ideal's")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds of ideal dry runs and previews")
	flag.IntVar(&cfg.diffRuns, "diff-runs", 3, "runs of `holdfast diff` per round")
	flag.Float64Var(&cfg.hubQPS, "hub-qps", 0, "the controller's hub client rate limit; 0 leaves NewManager's default (50/s), -1 turns it off")
	flag.DurationVar(&cfg.timeout, "timeout", 15*time.Minute, "how long to wait for the fleet, a deployment or a preview")
	flag.StringVar(&cfg.cpuProfile, "cpu-profile", "", "write a CPU profile of this process (the controller) during the first round's preview to this `file`")
	flag.StringVar(&cfg.holdfast, "holdfast", "", "the holdfast binary `holdfast diff` runs from (default: built from holdfast.dev/holdfast/cmd/holdfast)")
	measure.ParseFlags(measure.AtLeast("clusters", 1), measure.AtLeast("servers", 1), measure.AtLeast("objects", 4),
		measure.AtLeast("concurrency", 1), measure.AtLeast("rounds", 1), measure.AtLeast("diff-runs", 1))
	measure.Main(func(ctx context.Context) error { return run(ctx, cfg) })
}

// bench is the fleet and what the rounds need.
type bench struct {
	*measure.SimFleet
	cfg      config
	holdfast string
	// previewed is the last preview request measured.
	previewed string
}

// round is what one round measured.
type round struct {
	rev                         int
	ideal, summarised           time.Duration
	idealCPU, previewCPU        measure.CPUTimes
	requests                    measure.RequestCounts
	statusBytes, previewBytes   int
	groups, omitted, previewedN int32
	diff                        []time.Duration
	diffOut                     string
}

func run(ctx context.Context, cfg config) (retErr error) {
	began := time.Now()
	fmt.Printf("Machine: %s\n\n", measure.Machine())
	fmt.Printf("%d simulated clusters on %d API servers, %d objects each, %d controller workers, %d round(s).\n\n",
		cfg.clusters, cfg.servers, cfg.objects, cfg.concurrency, cfg.rounds)
	b := &bench{cfg: cfg}
	if b.holdfast = cfg.holdfast; b.holdfast == "" {
		dir, err := os.MkdirTemp("", "bench-preview-")
		if err != nil {
			return err
		}
		defer func() { _ = os.RemoveAll(dir) }()
		b.holdfast = filepath.Join(dir, "holdfast")
		fmt.Fprintln(os.Stderr, "building holdfast")
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", b.holdfast, "holdfast.dev/holdfast/cmd/holdfast").CombinedOutput(); err != nil {
			return fmt.Errorf("building holdfast: %w: %s", err, out)
		}
	}
	fmt.Fprintf(os.Stderr, "starting a hub and %d API servers\n", cfg.servers)
	f, err := measure.StartSimFleet(ctx, measure.SimFleetOptions{Servers: cfg.servers, Clusters: cfg.clusters})
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, f.Stop()) }()
	b.SimFleet = f
	if err := b.StartController(ctx, float32(cfg.hubQPS), controller.Options{Concurrency: cfg.concurrency, SkipNameValidation: true}); err != nil {
		return err
	}
	if err := b.WaitClustersReady(ctx, cfg.timeout); err != nil {
		return err
	}
	deployed, err := b.deploy(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "first revision deployed in %s\n", deployed.Round(time.Millisecond))
	fmt.Printf("First revision deployed to every cluster in %s.\n\n", measure.Seconds(deployed))

	var rounds []*round
	for k := range cfg.rounds {
		r, err := b.round(ctx, k+2)
		if err != nil {
			return fmt.Errorf("round %d: %w", k+1, err)
		}
		r.print(k+1, b.Names)
		rounds = append(rounds, r)
	}
	printSummary(rounds)
	fmt.Printf("Run time: %s (load average at the end: %s).\n", measure.Seconds(time.Since(began)), measure.LoadAverage())
	return nil
}

// configMapNames are the ConfigMaps the template declares.
func (b *bench) configMapNames() []string {
	var names []string
	for i := range b.cfg.objects - 3 {
		names = append(names, fmt.Sprintf("config-%02d", i))
	}
	return names
}

func (b *bench) manifests(rev int) string {
	return measure.SimManifests(b.configMapNames(), rev, "", "")
}

// deploy creates the template and the service set, and waits for the first revision everywhere.
func (b *bench) deploy(ctx context.Context) (time.Duration, error) {
	if err := b.CreateTemplate(ctx, templateNamespace, setName, b.manifests(1), measure.GoTemplate); err != nil {
		return 0, err
	}
	for _, s := range b.Sims {
		b.Statuses[naming.StatusName(setName, s)] = s
	}
	created := time.Now()
	err := b.CreateSimServiceSet(ctx, setName, holdfastv1.TemplateReference{Name: setName, Namespace: templateNamespace}, func(mcs *holdfastv1.MultiClusterService) {
		mcs.Spec.Rollout = &holdfastv1.RolloutStrategy{Approval: holdfastv1.ApprovalManual}
	})
	if err != nil {
		return 0, err
	}
	if _, err := b.WaitStatuses(ctx, b.cfg.timeout, measure.ReadyInSync(b.cfg.objects)); err != nil {
		return 0, fmt.Errorf("waiting for the first revision: %w", err)
	}
	return time.Since(created), nil
}

// round measures the ideal dry runs of revision rev, then Holdfast's preview of it, then the
// status and `holdfast diff`.
func (b *bench) round(ctx context.Context, rev int) (*round, error) {
	r := &round{rev: rev}
	b.Counter.WaitQuiet(time.Second, time.Minute)
	objs, err := measure.Objects(b.manifests(rev))
	if err != nil {
		return nil, err
	}
	cpu0 := b.CPU()
	if r.ideal, err = b.IdealDryRun(ctx, b.Sims, objs, b.cfg.concurrency, fieldset.FieldManager); err != nil {
		return nil, err
	}
	r.idealCPU = b.CPU().Minus(cpu0)
	fmt.Fprintf(os.Stderr, "revision %d: ideal dry runs in %s\n", rev, r.ideal.Round(time.Millisecond))

	b.Counter.WaitQuiet(time.Second, time.Minute)
	b.Counter.Reset()
	var stopProfile func() error
	if b.cfg.cpuProfile != "" && rev == 2 {
		if stopProfile, err = measure.StartCPUProfile(b.cfg.cpuProfile); err != nil {
			return nil, err
		}
	}
	cpu0 = b.CPU()
	changed := time.Now()
	if err := b.ChangeTemplate(ctx, templateNamespace, setName, b.manifests(rev)); err != nil {
		return nil, err
	}
	mcs, err := b.waitPreviewed(ctx)
	if err != nil {
		return nil, err
	}
	r.summarised = time.Since(changed)
	r.previewCPU = b.CPU().Minus(cpu0)
	if stopProfile != nil {
		if err := stopProfile(); err != nil {
			return nil, err
		}
	}
	r.requests = b.Counter.Reset()
	fmt.Fprintf(os.Stderr, "revision %d: previewed in %s\n", rev, r.summarised.Round(time.Millisecond))

	status, err := json.Marshal(mcs.Status)
	if err != nil {
		return nil, err
	}
	preview, err := json.Marshal(mcs.Status.Rollout.Preview)
	if err != nil {
		return nil, err
	}
	r.statusBytes, r.previewBytes = len(status), len(preview)
	p := mcs.Status.Rollout.Preview
	r.groups, r.omitted, r.previewedN = int32(len(p.Groups)), p.OmittedGroups, p.Previewed
	for range b.cfg.diffRuns {
		took, out, err := b.diff(ctx)
		if err != nil {
			return nil, err
		}
		r.diff, r.diffOut = append(r.diff, took), out
	}
	b.previewed = holdfastv1.PreviewRequest(mcs.Status.Rollout)
	return r, nil
}

// waitPreviewed polls the service set (one object, every 20 ms: this program watches no status
// object, which would add a watcher of every one of them to the hub's load) until its
// status.rollout is Previewed for a new preview request, with every cluster counted.
func (b *bench) waitPreviewed(ctx context.Context) (*holdfastv1.MultiClusterService, error) {
	deadline := time.Now().Add(b.cfg.timeout)
	for {
		mcs := &holdfastv1.MultiClusterService{}
		if err := b.Hub.Get(ctx, client.ObjectKey{Name: setName}, mcs); err != nil {
			return nil, err
		}
		if ro := mcs.Status.Rollout; ro != nil && ro.Phase == holdfastv1.RolloutPreviewed && ro.Preview != nil &&
			ro.Preview.Revision == ro.Revision && int(ro.Preview.Previewed) == len(b.Sims) &&
			b.previewed != holdfastv1.PreviewRequest(ro) {
			return mcs, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the service set is not Previewed after %s", b.cfg.timeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// diff runs `holdfast diff` against the hub and returns its wall time and output.
func (b *bench) diff(ctx context.Context) (time.Duration, string, error) {
	cmd := exec.CommandContext(ctx, b.holdfast, "diff", setName, "--kubeconfig", b.Fleet.HubKubeconfigPath())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	err := cmd.Run()
	took := time.Since(began)
	if err != nil {
		return 0, "", fmt.Errorf("holdfast diff: %w: %s", err, out.String())
	}
	return took, out.String(), nil
}

func (r *round) print(k int, servers []string) {
	fmt.Printf("## Round %d: revision %d\n\n", k, r.rev)
	t := measure.NewTable("measure", "time", "ratio to the ideal", "CPU (this process / hub / targets)")
	t.Row("ideal: a server-side dry-run apply of every object on every cluster", measure.Seconds(r.ideal), "1", r.idealCPU.String())
	t.Row("Holdfast: the service set Previewed, every cluster counted", measure.Seconds(r.summarised), ratio(r.summarised, r.ideal), r.previewCPU.String())
	fmt.Println(t.String())
	s := measure.NewTable("service set", "value")
	s.Row("status as stored (JSON)", fmt.Sprintf("%.1f KiB", float64(r.statusBytes)/1024))
	s.Row("of which status.rollout.preview", fmt.Sprintf("%.1f KiB", float64(r.previewBytes)/1024))
	s.Row("clusters counted; groups shown (+ left out)", fmt.Sprintf("%d; %d (+%d)", r.previewedN, r.groups, r.omitted))
	var runs []string
	for _, d := range r.diff {
		runs = append(runs, measure.Seconds(d))
	}
	s.Row("`holdfast diff` wall time, each run", strings.Join(runs, ", "))
	fmt.Println(s.String())
	fmt.Println("Requests of the controller during the preview:")
	fmt.Println(r.requests.Table(append([]string{"hub"}, servers...)...).String())
	lines := strings.Split(strings.TrimSpace(r.diffOut), "\n")
	fmt.Printf("`holdfast diff %s` (first lines):\n\n```\n%s\n```\n\n", setName, strings.Join(lines[:min(len(lines), 8)], "\n"))
}

func printSummary(rounds []*round) {
	var ratios, diffs []float64
	maxStatus := 0
	for _, r := range rounds {
		ratios = append(ratios, r.summarised.Seconds()/r.ideal.Seconds())
		for _, d := range r.diff {
			diffs = append(diffs, d.Seconds())
		}
		maxStatus = max(maxStatus, r.statusBytes)
	}
	slices.Sort(ratios)
	slices.Sort(diffs)
	fmt.Println("## Goals")
	fmt.Println()
	t := measure.NewTable("goal", "measured", "met")
	t.Row(fmt.Sprintf("preview ≤ %.1f× the ideal dry-run loop", goalRatio), fmt.Sprintf("%.2f×–%.2f× over %d rounds", ratios[0], ratios[len(ratios)-1], len(rounds)), yes(ratios[len(ratios)-1] <= goalRatio))
	t.Row("service set status < 64 KiB", fmt.Sprintf("%.1f KiB at most", float64(maxStatus)/1024), yes(maxStatus < goalStatus))
	t.Row("`holdfast diff` ≤ 2 s", fmt.Sprintf("%.2f–%.2f s", diffs[0], diffs[len(diffs)-1]), yes(diffs[len(diffs)-1] <= goalDiff.Seconds()))
	fmt.Println(t.String())
}

func ratio(a, b time.Duration) string { return fmt.Sprintf("%.2f×", a.Seconds()/b.Seconds()) }

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

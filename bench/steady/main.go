// Command steady measures what the Holdfast controller costs when nothing changes: -clusters (3)
// targets (internal/localfleet, with kube-controller-manager unless -no-controller-manager) each
// hold -objects (1,000) objects of one MultiClusterService in ContinuousWithDriftDetection mode,
// so every managed kind is watched on every target. Once every ClusterServiceStatus is Ready with
// all objects in sync and the controller has sent no request other than watches and health
// probes for -quiet (10s), it measures a window of -duration (5m) in which nothing changes:
//
//   - every request the controller sent to each target (and to the hub), by verb, counted by
//     wrapping its HTTP transports as in deploy1000 (a watch is counted when it is opened);
//   - those requests in three groups: watch requests (an informer opens one when its watch ends:
//     client-go asks the API server to end each watch after 5 to 10 minutes, and a broken or
//     expired watch is opened again), the Cluster controller's health probe (GET /version and
//     POST selfsubjectreviews, every 10s), and everything else, listed by verb and resource;
//   - the CPU time (user+sys) of this process, which is the controller's but for a little
//     copying of the control planes' logs, and the targets' control planes' CPU time;
//   - the controller's Go heap in use after a forced GC and the process RSS at the end.
//
// The goal is zero requests beyond watches and probes. The probe interval is left as it is; its
// requests are reported separately.
//
// Usage: go run ./bench/steady [-duration 5m]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/measure"
)

const (
	templateNamespace = "bench"
	templateName      = "steady"
	serviceSetName    = "bench-steady"
	serviceName       = "steady"
	targetNamespace   = "bench-steady"
)

type config struct {
	clusters, objects        int
	noControllerManager      bool
	duration, quiet, timeout time.Duration
}

func main() {
	var cfg config
	flag.IntVar(&cfg.clusters, "clusters", 3, "number of target clusters")
	flag.IntVar(&cfg.objects, "objects", 1000, "objects deployed to each cluster (at least 10)")
	flag.BoolVar(&cfg.noControllerManager, "no-controller-manager", false, "run the targets without kube-controller-manager")
	flag.DurationVar(&cfg.duration, "duration", 5*time.Minute, "length of the measured window")
	flag.DurationVar(&cfg.quiet, "quiet", 10*time.Second, "the window opens once the controller sent nothing but watches and probes for this long")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "how long to wait for the deployment, and for the quiet period")
	measure.ParseFlags(measure.AtLeast("objects", 10), measure.AtLeast("clusters", 1))
	measure.Main(func(ctx context.Context) error { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg config) (retErr error) {
	results := measure.NewTable("measure", "value")
	kcm := map[bool]string{true: "with", false: "without"}[!cfg.noControllerManager]
	m := measure.MixOf(cfg.objects)
	before := func(h *measure.Harness) error {
		results.Row(fmt.Sprintf("fleet start (hub + %d targets %s kube-controller-manager, in parallel; CRDs, registration)", cfg.clusters, kcm), measure.Seconds(h.FleetUp))
		if err := h.CreateTemplate(ctx, templateNamespace, templateName, m.Manifests(targetNamespace)); err != nil {
			return err
		}
		results.Row("objects per cluster", fmt.Sprintf("%d (%s)", m.Total(), m))
		return nil
	}
	h, err := measure.Start(ctx, measure.Setup{FleetOptions: measure.FleetOptions{Clusters: cfg.clusters, ControllerManager: !cfg.noControllerManager},
		ReadyTimeout: cfg.timeout, BeforeController: before})
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, h.Stop()) }()
	h.ExpectServiceSet(serviceSetName)
	created := time.Now()
	if err := h.CreateServiceSet(ctx, serviceSetName, holdfastv1.SyncModeContinuousWithDriftDetection, serviceName,
		holdfastv1.TemplateReference{Name: templateName, Namespace: templateNamespace}, targetNamespace); err != nil {
		return err
	}
	if _, err := h.WaitStatuses(ctx, cfg.timeout, measure.ReadyInSync(m.Total())); err != nil {
		return fmt.Errorf("waiting for the deployment: %w", err)
	}
	results.Row(fmt.Sprintf("MultiClusterService (ContinuousWithDriftDetection) created until all %d ClusterServiceStatuses Ready with %d of %d in sync", cfg.clusters, m.Total(), m.Total()), measure.Seconds(time.Since(created)))
	fmt.Fprintf(os.Stderr, "Deployed in %s; waiting for %s with nothing but watches and probes\n", time.Since(created).Round(time.Millisecond), cfg.quiet)
	settled, err := waitSettled(ctx, h, cfg.quiet, cfg.timeout)
	if err != nil {
		return err
	}
	results.Row("all Ready until settled (the last request other than a watch or probe, then "+cfg.quiet.String()+")", measure.Seconds(settled))

	// The window.
	fmt.Fprintf(os.Stderr, "Settled; measuring %s with nothing changing\n", cfg.duration)
	self := os.Getpid()
	watches0 := registryWatches(h)
	h.Counter.Reset()
	cpu0, err := measure.CPUTime(self)
	if err != nil {
		return err
	}
	targetCPU0 := h.TargetsCPU()
	start := time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(cfg.duration):
	}
	window := time.Since(start)
	counts := h.Counter.Reset()
	watches1 := registryWatches(h)
	cpu1, err := measure.CPUTime(self)
	if err != nil {
		return err
	}
	targetCPU := h.TargetsCPU() - targetCPU0
	heap, rss, err := measure.SelfMemory()
	if err != nil {
		return err
	}

	results.Row("window", measure.Seconds(window))
	results.Row("CPU time (user+sys) of this process during the window", fmt.Sprintf("%s (%.2f%% of one core)", measure.Seconds(cpu1-cpu0), 100*(cpu1-cpu0).Seconds()/window.Seconds()))
	results.Row(fmt.Sprintf("CPU time of the %d targets' control planes during the window", cfg.clusters), measure.Seconds(targetCPU))
	results.Row("after the window: Go heap in use (after a forced GC)", measure.MiB(heap))
	results.Row("after the window: process RSS", measure.MiB(rss))
	results.Row("after the window: goroutines", fmt.Sprint(runtime.NumGoroutine()))

	groups := measure.NewTable(append([]string{"requests during the window"}, h.Servers...)...)
	other := map[string][]string{}
	var watches, probes, others []string
	totalOther := 0
	for _, s := range h.Servers {
		w, p, o := 0, 0, 0
		var watched []string
		for k, n := range counts.Requests[s] {
			switch {
			case k.Verb == "watch":
				w += n
				watched = append(watched, fmt.Sprintf("%s %d", k.Resource, n))
			case measure.IsProbe(k):
				p += n
			default:
				o += n
				other[s] = append(other[s], fmt.Sprintf("%s %s %s: %d", k.Method, k.Verb, k.Resource, n))
			}
		}
		slices.Sort(watched)
		slices.Sort(other[s])
		if len(watched) > 0 {
			watches = append(watches, fmt.Sprintf("%d (%s)", w, strings.Join(watched, ", ")))
		} else {
			watches = append(watches, "0")
		}
		probes = append(probes, fmt.Sprint(p))
		others = append(others, fmt.Sprint(o))
		if s != "hub" {
			totalOther += o
		}
	}
	groups.Row(append([]string{"watch requests (opened in the window, by resource)"}, watches...)...)
	fromRegistry := []string{"… as counted by the fleet registry (fleet.Registry.WatchRequests)"}
	for _, n := range h.Names {
		fromRegistry = append(fromRegistry, fmt.Sprint(watches1[n]-watches0[n]))
	}
	groups.Row(append(fromRegistry, "")...)
	groups.Row(append([]string{"health probe (GET /version, POST selfsubjectreviews)"}, probes...)...)
	groups.Row(append([]string{"**everything else**"}, others...)...)

	fmt.Println("#### Steady state")
	fmt.Println()
	fmt.Println(results)
	fmt.Printf("Requests of the controller during the window (%s), by verb:\n\n", measure.Seconds(window))
	fmt.Println(counts.Table(h.Servers...))
	fmt.Println("The same requests, grouped:")
	fmt.Println()
	fmt.Println(groups)
	for _, s := range h.Servers {
		if len(other[s]) > 0 {
			fmt.Printf("Other requests to %s: %s.\n\n", s, strings.Join(other[s], "; "))
		}
	}
	if totalOther == 0 {
		fmt.Printf("Goal met: no request to any target beyond watches and health probes in %s.\n", measure.Seconds(window))
	} else {
		fmt.Printf("**Goal missed**: %d requests to the targets beyond watches and health probes (listed above).\n", totalOther)
	}
	return nil
}

// registryWatches is the number of watch requests the fleet registry counted per cluster.
func registryWatches(h *measure.Harness) map[string]int64 {
	out := map[string]int64{}
	for _, n := range h.Names {
		for _, c := range h.Registry.WatchRequests(types.NamespacedName{Namespace: h.Fleet.Namespace, Name: n}) {
			out[n] += c
		}
	}
	return out
}

// waitSettled waits until the controller sent only watches and probes to the targets for quiet,
// and returns how long that took.
func waitSettled(ctx context.Context, h *measure.Harness, quiet, timeout time.Duration) (time.Duration, error) {
	began := time.Now()
	lastBusy := began
	h.Counter.Reset()
	for {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
		counts := h.Counter.Reset()
		for _, s := range h.Names {
			for k := range counts.Requests[s] {
				if k.Verb != "watch" && !measure.IsProbe(k) {
					lastBusy = time.Now()
				}
			}
		}
		if time.Since(lastBusy) >= quiet {
			return lastBusy.Sub(began) + quiet, nil
		}
		if time.Since(began) > timeout {
			return 0, fmt.Errorf("the controller did not settle within %s", timeout)
		}
	}
}

// Command memory measures the Holdfast controller's memory per managed object. It starts a hub
// and -clusters (2) targets (internal/localfleet, without kube-controller-manager: nothing in the
// mix needs it) and the controller in this process, then deploys -sets (2) MultiClusterServices,
// each with its own inline ServiceTemplate of -objects (2,500) objects (the deploy1000 mix: a
// Namespace, mostly ConfigMaps, Secrets, Services, ServiceAccounts, Roles, RoleBindings; at most
// 200 Services per cluster over all sets, the rest more ConfigMaps) to every target: clusters ×
// sets × objects managed objects, 10,000 by default. Several service sets or
// clusters are needed because one status object holds one (service set, cluster) inventory,
// which etcd's 1.5 MiB limit caps at about 5,500 objects.
//
// It reports the Go heap after a forced GC (HeapAlloc, the live bytes, and HeapInuse, the spans
// holding them, as the other benchmarks report) and the process RSS:
//
//   - baseline: the controller running, every Cluster Ready, nothing deployed;
//   - with the templates created (they are cached on the hub whether or not anything is
//     deployed, and grow with what they declare, not with where it is deployed);
//   - then, for each service set in turn: deployed in Continuous mode, Ready and in sync (what
//     the controller keeps per deployment; it watches nothing on the targets), and after
//     switching it to ContinuousWithDriftDetection, -settle (10s) after the controller went
//     quiet: its objects are now watched on every target, and the difference is what the drift
//     watches cost.
//
// The goal's measure is the last line minus the empty baseline, divided by the number of
// managed objects. Deploying the sets one after the other also shows the cost of one more
// managed object: the first set pays for what is allocated once (target discovery, the watch
// decoders' buffers, event caches), the last set's objects only for themselves. With
// -heap-profile FILE it also writes a heap profile (go tool pprof) at the end. With -flood N it
// then creates N labelled ConfigMaps Holdfast did not apply on the first target, each with a
// -flood-padding byte holdfast.dev/ annotation, and measures again: what a target's users can
// make the controller hold (bounded by drift.Applied).
//
// Usage: go run ./bench/memory
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/measure"
)

const templateNamespace = "bench"

type config struct {
	clusters, sets, objects int
	settle, quiet, timeout  time.Duration
	heapProfile             string
	flood, floodPadding     int
}

func main() {
	var cfg config
	flag.IntVar(&cfg.clusters, "clusters", 2, "number of target clusters")
	flag.IntVar(&cfg.sets, "sets", 2, "MultiClusterServices, each deploying its own template to every cluster")
	flag.IntVar(&cfg.objects, "objects", 2500, "objects per template (at least 10, at most about 5,500)")
	flag.DurationVar(&cfg.settle, "settle", 10*time.Second, "wait after the deployment went quiet, before measuring")
	flag.DurationVar(&cfg.quiet, "quiet", 5*time.Second, "the deployment is over once the controller sent no request but probes and watches for this long")
	flag.DurationVar(&cfg.timeout, "timeout", 20*time.Minute, "how long to wait for the deployment")
	flag.StringVar(&cfg.heapProfile, "heap-profile", "", "write a heap profile with everything deployed to this file")
	flag.IntVar(&cfg.flood, "flood", 0, "then create this many labelled ConfigMaps Holdfast did not apply on the first target, and measure again")
	flag.IntVar(&cfg.floodPadding, "flood-padding", 8<<10, "bytes of the holdfast.dev/ annotation of each -flood ConfigMap")
	measure.ParseFlags(measure.AtLeast("objects", 10), measure.AtLeast("clusters", 1), measure.AtLeast("sets", 1))
	measure.Main(func(ctx context.Context) error { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg config) (retErr error) {
	results := measure.NewTable("measure", "Go heap (HeapAlloc)", "Go heap (HeapInuse)", "process RSS")
	row := func(label string, s measure.Memory) {
		results.Row(label, measure.MiB(s.Alloc), measure.MiB(s.Inuse), measure.MiB(s.RSS))
	}
	setup := measure.NewTable("measure", "value")

	h, err := measure.Start(ctx, measure.Setup{FleetOptions: measure.FleetOptions{Clusters: cfg.clusters, UnlimitedClients: cfg.flood > 0}, ReadyTimeout: cfg.timeout})
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, h.Stop()) }()
	setup.Row(fmt.Sprintf("fleet start (hub + %d targets, without kube-controller-manager)", cfg.clusters), measure.Seconds(h.FleetUp))
	h.Counter.WaitQuiet(cfg.quiet, time.Minute)
	base, err := measure.MemoryNow()
	if err != nil {
		return err
	}
	row("baseline: controller running, every Cluster Ready, nothing deployed", base)

	m := measure.MixOf(cfg.objects)
	if perSet := 200 / cfg.sets; m.Services > perSet {
		// A sandbox's service range is a /24: the service sets share 200 Services per cluster.
		m.ConfigMaps, m.Services = m.ConfigMaps+m.Services-perSet, perSet
	}
	for i := range cfg.sets {
		if err := h.CreateTemplate(ctx, templateNamespace, setName(i), m.Manifests(setName(i))); err != nil {
			return err
		}
	}
	time.Sleep(2 * time.Second) // for the hub cache to hold the templates
	withTemplates, err := measure.MemoryNow()
	if err != nil {
		return err
	}
	row(fmt.Sprintf("templates created (%d × %d objects), nothing deployed", cfg.sets, m.Total()), withTemplates)

	// The service sets are deployed one after the other, each first in Continuous (the
	// controller keeps what it needs for the status objects, and watches nothing on the
	// targets), then switched to ContinuousWithDriftDetection (every managed kind watched on
	// every target). The first set also pays for what is allocated once, whatever the number of
	// objects (target discovery, watch decoders' buffers, event caches); the last one shows
	// the cost of one more managed object.
	perSet := cfg.clusters * m.Total()
	managed := cfg.sets * perSet
	var deployed time.Duration
	var inventories, watches measure.Memory
	prev := withTemplates
	for i := range cfg.sets {
		h.ExpectServiceSet(setName(i))
		fmt.Fprintf(os.Stderr, "Deploying service set %d of %d: %d managed objects\n", i+1, cfg.sets, perSet)
		created := time.Now()
		if err := h.CreateServiceSet(ctx, setName(i), holdfastv1.SyncModeContinuous, "bulk",
			holdfastv1.TemplateReference{Name: setName(i), Namespace: templateNamespace}, setName(i)); err != nil {
			return err
		}
		if _, err := h.WaitStatuses(ctx, cfg.timeout, measure.ReadyInSync(m.Total())); err != nil {
			return fmt.Errorf("waiting for the deployment of %s: %w", setName(i), err)
		}
		deployed += time.Since(created)
		h.Counter.WaitQuiet(cfg.quiet, 5*time.Minute)
		time.Sleep(cfg.settle)
		unwatched, err := measure.MemoryNow()
		if err != nil {
			return err
		}
		row(fmt.Sprintf("%d objects managed (%d of %d service sets), Ready, in sync; the last set in Continuous: not watched", (i+1)*perSet, i+1, cfg.sets), unwatched)

		fmt.Fprintf(os.Stderr, "Switching %s to ContinuousWithDriftDetection\n", setName(i))
		h.Counter.Reset()
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"syncMode":"`+string(holdfastv1.SyncModeContinuousWithDriftDetection)+`"}}`))
		if err := h.Hub.Patch(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: setName(i)}}, patch); err != nil {
			return fmt.Errorf("switching %s to drift detection: %w", setName(i), err)
		}
		if _, err := h.WaitStatuses(ctx, cfg.timeout, func(css *holdfastv1.ClusterServiceStatus) bool {
			return css.Status.SyncMode == holdfastv1.SyncModeContinuousWithDriftDetection && measure.ReadyInSync(m.Total())(css)
		}); err != nil {
			return fmt.Errorf("waiting for drift detection of %s: %w", setName(i), err)
		}
		if i == 0 {
			// Every set declares the same kinds: the first one opens the watches.
			for h.Counter.Count("watch", h.Names...) < cfg.clusters*len(m.Kinds()) {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		h.Counter.WaitQuiet(cfg.quiet, 5*time.Minute)
		time.Sleep(cfg.settle)
		watched, err := measure.MemoryNow()
		if err != nil {
			return err
		}
		row(fmt.Sprintf("the same with the last set in ContinuousWithDriftDetection: its objects watched on every target (%d watched)", (i+1)*perSet), watched)
		inventories = inventories.Plus(unwatched.Minus(prev))
		watches = watches.Plus(watched.Minus(unwatched))
		if i == cfg.sets-1 && cfg.sets > 1 {
			setup.Row(fmt.Sprintf("the last service set's %d objects, watched, per managed object (one more object: fixed costs paid by the first set)", perSet), perObject(watched.Minus(prev), perSet))
		}
		prev = watched
	}
	full := prev
	if cfg.flood > 0 {
		fmt.Fprintf(os.Stderr, "Flooding %s with %d labelled ConfigMaps\n", h.Names[0], cfg.flood)
		if err := flood(ctx, h.Targets[0], cfg.flood, cfg.floodPadding, setName(0)); err != nil {
			return err
		}
		h.Counter.WaitQuiet(cfg.quiet, 5*time.Minute)
		time.Sleep(cfg.settle)
		flooded, err := measure.MemoryNow()
		if err != nil {
			return err
		}
		row(fmt.Sprintf("the same after a flood of %d labelled ConfigMaps Holdfast did not apply, each with a %d-byte holdfast.dev/ annotation, on one target", cfg.flood, cfg.floodPadding), flooded)
		setup.Row("the flood (after it minus before it), per flooded object", perObject(flooded.Minus(full), cfg.flood))
	}
	if cfg.heapProfile != "" {
		if err := measure.WriteHeapProfile(cfg.heapProfile); err != nil {
			return err
		}
	}

	setup.Row("objects per template", fmt.Sprintf("%d (%s)", m.Total(), m))
	setup.Row("managed objects", fmt.Sprint(managed))
	setup.Row("MultiClusterServices created until every status object Ready with all objects in sync (sum over the sets)", measure.Seconds(deployed))
	setup.Row("per managed object, beyond the empty baseline (templates included): the goal's measure", perObject(full.Minus(base), managed))
	setup.Row("per managed object, beyond the baseline with the templates", perObject(full.Minus(withTemplates), managed))
	setup.Row("of which the templates (created minus the empty baseline), per managed object", perObject(withTemplates.Minus(base), managed))
	setup.Row("of which the drift watches (each set in ContinuousWithDriftDetection minus in Continuous), per managed object", perObject(watches, managed))
	setup.Row("of which the deployments (each set in Continuous minus before it: status objects, whatever the controller keeps per deployment), per managed object", perObject(inventories, managed))

	fmt.Println("#### Memory")
	fmt.Println()
	fmt.Println(results)
	fmt.Println(setup)
	const goal = 2048
	total := full.Minus(base)
	alloc, inuse := float64(total.Alloc)/float64(managed), float64(total.Inuse)/float64(managed)
	for _, c := range []struct {
		what string
		v    float64
	}{{"live heap (HeapAlloc)", alloc}, {"heap in use (HeapInuse)", inuse}} {
		verdict := "Goal met"
		if c.v >= goal {
			verdict = "**Goal missed**"
		}
		fmt.Printf("%s: %.0f B of %s per managed object beyond the empty baseline, against < 2 KiB.\n", verdict, c.v, c.what)
	}
	return nil
}

func perObject(s measure.Memory, n int) string {
	return fmt.Sprintf("%.0f B (HeapAlloc), %.0f B (HeapInuse), %.0f B (RSS)",
		float64(s.Alloc)/float64(n), float64(s.Inuse)/float64(n), float64(s.RSS)/float64(n))
}

func setName(i int) string { return fmt.Sprintf("bench-mem-%d", i+1) }

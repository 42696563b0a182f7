// Command fleet10 measures what Holdfast's controller costs while it watches over a small fleet:
// a hub and -clusters targets (10 by default) started by internal/localfleet, each target
// registered as a Cluster. It reports
//
//   - how long the fleet takes to start (all control planes in parallel, without
//     kube-controller-manager) and how much memory its control planes hold, for scale;
//   - how long the controller, started in this process with controller.NewManager, takes from
//     manager start until every Cluster is Ready;
//   - the controller's memory after -steady of steady probing: the Go heap in use (after a
//     forced GC) and the process RSS, each also minus a baseline taken before the manager was
//     created;
//   - the CPU time this process used during that steady period.
//
// The control planes are separate processes, so this process's CPU and memory are the
// controller's, plus two small things the baseline or the notes account for: the hub client
// that localfleet.Up built (included in the baseline), and the goroutines that copy the control
// planes' output to their log files (idle control planes log little).
//
// Usage: go run ./bench/fleet10
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/tenancy"
)

func main() {
	clusters := flag.Int("clusters", 10, "number of target clusters")
	steady := flag.Duration("steady", 30*time.Second, "how long the controller probes the Ready fleet before it is measured")
	readyTimeout := flag.Duration("ready-timeout", 5*time.Minute, "how long to wait for every Cluster to become Ready")
	measure.ParseFlags(measure.AtLeast("clusters", 1))

	// measure.Main logs errors only: the controller's info logs would cost CPU in the measured
	// period.
	measure.Main(func(ctx context.Context) error { return run(ctx, *clusters, *steady, *readyTimeout) })
}

func run(ctx context.Context, clusters int, steady, readyTimeout time.Duration) (retErr error) {
	if _, err := sandbox.BinaryDir(); err != nil {
		return err
	}
	fmt.Printf("Machine: %s\n\n", measure.Machine())
	results := measure.NewTable("measure", "value")
	self := os.Getpid()

	fmt.Fprintf(os.Stderr, "Starting a hub and %d targets\n", clusters)
	began := time.Now()
	f, err := localfleet.Up(ctx, localfleet.Options{Clusters: clusters, NoControllerManager: true})
	if err != nil {
		return fmt.Errorf("starting the fleet: %w", err)
	}
	defer func() { retErr = errors.Join(retErr, f.Stop()) }()
	results.Row(fmt.Sprintf("fleet start (hub + %d targets in parallel, CRDs, registration)", clusters), measure.Seconds(time.Since(began)))
	fmt.Fprintf(os.Stderr, "Fleet up in %s, load average %s\n", time.Since(began).Round(time.Millisecond), measure.LoadAverage())

	planesRSS, err := controlPlanesRSS(f)
	if err != nil {
		return err
	}
	results.Row(fmt.Sprintf("RSS of the %d control planes (etcd + kube-apiserver each), just started", clusters+1), measure.MiB(planesRSS))

	baseHeap, baseRSS, err := selfMemory(self)
	if err != nil {
		return err
	}
	results.Row("baseline before the manager: Go heap in use", measure.MiB(baseHeap))
	results.Row("baseline before the manager: process RSS", measure.MiB(baseRSS))

	created := time.Now()
	mgr, _, err := controller.NewManager(ctx, f.Hub.RESTConfig(), controller.Options{MetricsAddr: "0", HealthAddr: "0", PlatformNamespaces: []string{tenancy.AllNamespaces}})
	if err != nil {
		return err
	}
	results.Row("controller.NewManager", measure.Seconds(time.Since(created)))
	mgrCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	started := time.Now()
	go func() { done <- mgr.Start(mgrCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			retErr = errors.Join(retErr, fmt.Errorf("running the controller: %w", err))
		}
	}()

	if err := waitAllReady(ctx, f, clusters, readyTimeout); err != nil {
		return err
	}
	results.Row(fmt.Sprintf("manager start until all %d Clusters Ready", clusters), measure.Seconds(time.Since(started)))
	fmt.Fprintf(os.Stderr, "All %d Clusters Ready after %s; probing steadily for %s\n", clusters, time.Since(started).Round(time.Millisecond), steady)

	reconcilesBefore, err := clusterReconciles()
	if err != nil {
		return err
	}
	cpuBefore, err := measure.CPUTime(self)
	if err != nil {
		return err
	}
	steadyBegan := time.Now()
	select {
	case <-time.After(steady):
	case <-ctx.Done():
		return ctx.Err()
	}
	cpuAfter, err := measure.CPUTime(self)
	if err != nil {
		return err
	}
	wall := time.Since(steadyBegan)
	reconcilesAfter, err := clusterReconciles()
	if err != nil {
		return err
	}
	heap, rss, err := selfMemory(self)
	if err != nil {
		return err
	}
	cpu := cpuAfter - cpuBefore
	results.Row(fmt.Sprintf("after %s steady: Go heap in use", steady), measure.MiB(heap))
	results.Row(fmt.Sprintf("after %s steady: Go heap in use minus baseline", steady), measure.MiB(heap-baseHeap))
	results.Row(fmt.Sprintf("after %s steady: process RSS", steady), measure.MiB(rss))
	results.Row(fmt.Sprintf("after %s steady: process RSS minus baseline", steady), measure.MiB(rss-baseRSS))
	results.Row(fmt.Sprintf("after %s steady: goroutines", steady), fmt.Sprint(runtime.NumGoroutine()))
	results.Row(fmt.Sprintf("Cluster reconciles (one probe each) during %s steady", steady), fmt.Sprint(reconcilesAfter-reconcilesBefore))
	results.Row(fmt.Sprintf("CPU time (user+sys) during %s steady", wall.Round(time.Millisecond)), fmt.Sprintf("%s (%.2f%% of one core)", measure.Seconds(cpu), 100*cpu.Seconds()/wall.Seconds()))

	// The fleet must still be Ready, or the steady numbers describe something else.
	if err := waitAllReady(ctx, f, clusters, time.Second); err != nil {
		return fmt.Errorf("after the steady period: %w", err)
	}
	if planesRSS, err = controlPlanesRSS(f); err != nil {
		return err
	}
	results.Row(fmt.Sprintf("RSS of the %d control planes at the end", clusters+1), measure.MiB(planesRSS))
	fmt.Println(results)
	return nil
}

// clusterReconciles counts the Cluster controller's reconciles so far, from controller-runtime's
// metrics registry (filled even though the metrics server is off). Each reconcile of a healthy
// Cluster is one probe, so this shows the steady period was spent probing.
func clusterReconciles() (int, error) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return 0, fmt.Errorf("reading controller metrics: %w", err)
	}
	var n float64
	for _, mf := range families {
		if mf.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "cluster" {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return int(n), nil
}

// selfMemory returns the Go heap in use after a forced collection, and the process RSS.
func selfMemory(pid int) (heapInuse, rss int64, err error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, err = measure.RSS(pid)
	return int64(ms.HeapInuse), rss, err
}

func controlPlanesRSS(f *localfleet.Fleet) (int64, error) {
	var sum int64
	for _, cp := range append([]*sandbox.ControlPlane{f.Hub}, f.Targets...) {
		for _, pid := range cp.PIDs() {
			rss, err := measure.RSS(pid)
			if err != nil {
				return 0, err
			}
			sum += rss
		}
	}
	return sum, nil
}

// waitAllReady polls the hub until n Clusters are Ready.
func waitAllReady(ctx context.Context, f *localfleet.Fleet, n int, timeout time.Duration) error {
	ready := 0
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		clusters, err := f.Clusters(ctx)
		if err != nil {
			return false, nil //nolint:nilerr // a busy hub is retried until the timeout
		}
		ready = 0
		for i := range clusters {
			for _, c := range clusters[i].Status.Conditions {
				if c.Type == holdfastv1.ReadyCondition && c.Status == metav1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == n, nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d Clusters Ready: %w", ready, n, err)
	}
	return nil
}

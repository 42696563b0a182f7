// Command controlplane measures what one sandbox control plane costs: how long
// internal/sandbox.Start takes to bring etcd and kube-apiserver to ready, and how much memory
// (RSS) each process holds once it is ready and has idled for a few seconds. It starts the
// control plane -runs times, one after another, then once more with kube-controller-manager.
//
// These are the numbers behind "how many clusters fit on this machine" and "how long does a
// test that needs a real API server wait for it". They are timings on a shared machine, so they
// are recorded in bench/RESULTS.md, never asserted.
//
// Usage: go run ./bench/controlplane -runs 5
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/sandbox"
)

func main() {
	runs := flag.Int("runs", 5, "how many times to start a control plane without kube-controller-manager")
	idle := flag.Duration("idle", 5*time.Second, "how long a ready control plane idles before its memory is read")
	kcm := flag.Bool("kcm", true, "also start one control plane with kube-controller-manager")
	measure.ParseFlags(measure.AtLeast("runs", 1))

	measure.Main(func(ctx context.Context) error { return run(ctx, *runs, *idle, *kcm) })
}

// sample is one start of a control plane.
type sample struct {
	ready, stop time.Duration
	// rssAtReady and rssIdle map a process name to its RSS right after Start returned and after
	// the idle period.
	rssAtReady, rssIdle map[string]int64
}

func (s sample) total(rss map[string]int64) int64 {
	var sum int64
	for _, v := range rss {
		sum += v
	}
	return sum
}

func run(ctx context.Context, runs int, idle time.Duration, withKCM bool) error {
	binDir, err := sandbox.BinaryDir()
	if err != nil {
		return err
	}
	fmt.Printf("Machine: %s\n", measure.Machine())
	fmt.Printf("Binaries: %s (Kubernetes %s, etcd %s)\n\n", binDir, sandbox.KubernetesVersion, sandbox.EtcdVersion)

	var samples []sample
	for i := range runs {
		s, err := startOnce(ctx, fmt.Sprintf("bench-%d", i+1), false, idle)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "Run %d: ready in %s\n", i+1, measure.Seconds(s.ready))
		samples = append(samples, s)
	}

	fmt.Printf("### etcd + kube-apiserver, %d sequential starts\n\n", runs)
	t := measure.NewTable("run", "time to ready", "etcd RSS", "kube-apiserver RSS", "sum RSS at ready", "sum RSS after "+idle.String()+" idle", "stop")
	var ready []time.Duration
	var atReady, idled []int64
	for i, s := range samples {
		t.Row(fmt.Sprint(i+1), measure.Seconds(s.ready), measure.MiB(s.rssIdle["etcd"]), measure.MiB(s.rssIdle["kube-apiserver"]),
			measure.MiB(s.total(s.rssAtReady)), measure.MiB(s.total(s.rssIdle)), measure.Seconds(s.stop))
		ready = append(ready, s.ready)
		atReady = append(atReady, s.total(s.rssAtReady))
		idled = append(idled, s.total(s.rssIdle))
	}
	fmt.Println(t)
	summary := measure.NewTable("", "min", "median", "max")
	r := measure.SpreadOf(ready)
	summary.Row("time to ready", measure.Seconds(r.Min), measure.Seconds(r.Median), measure.Seconds(r.Max))
	a := measure.SpreadOf(atReady)
	summary.Row("sum RSS at ready", measure.MiB(a.Min), measure.MiB(a.Median), measure.MiB(a.Max))
	m := measure.SpreadOf(idled)
	summary.Row("sum RSS after idle", measure.MiB(m.Min), measure.MiB(m.Median), measure.MiB(m.Max))
	fmt.Println(summary)

	if !withKCM {
		return nil
	}
	s, err := startOnce(ctx, "bench-kcm", true, idle)
	if err != nil {
		return err
	}
	fmt.Printf("### etcd + kube-apiserver + kube-controller-manager, one start\n\n")
	t = measure.NewTable("time to ready", "etcd RSS", "kube-apiserver RSS", "kube-controller-manager RSS", "sum RSS at ready", "sum RSS after "+idle.String()+" idle", "stop")
	t.Row(measure.Seconds(s.ready), measure.MiB(s.rssIdle["etcd"]), measure.MiB(s.rssIdle["kube-apiserver"]),
		measure.MiB(s.rssIdle["kube-controller-manager"]), measure.MiB(s.total(s.rssAtReady)), measure.MiB(s.total(s.rssIdle)), measure.Seconds(s.stop))
	fmt.Println(t)
	return nil
}

// startOnce starts a control plane in a fresh temporary directory, reads its processes' memory
// at ready and after idling, and stops it. Stop is part of the sample because a benchmark that
// leaves processes behind would skew the next run.
func startOnce(ctx context.Context, name string, withKCM bool, idle time.Duration) (_ sample, retErr error) {
	began := time.Now()
	cp, err := sandbox.Start(ctx, sandbox.Options{Name: name, ControllerManager: withKCM})
	if err != nil {
		return sample{}, err
	}
	s := sample{ready: time.Since(began)}
	stopped := false
	defer func() {
		if !stopped {
			retErr = errors.Join(retErr, cp.Stop())
		}
	}()
	if s.rssAtReady, err = rssByCommand(cp.PIDs()); err != nil {
		return sample{}, err
	}
	select {
	case <-time.After(idle):
	case <-ctx.Done():
		return sample{}, ctx.Err()
	}
	if s.rssIdle, err = rssByCommand(cp.PIDs()); err != nil {
		return sample{}, err
	}
	stopBegan := time.Now()
	stopped = true
	if err := cp.Stop(); err != nil {
		return sample{}, err
	}
	s.stop = time.Since(stopBegan)
	return s, nil
}

func rssByCommand(pids []int) (map[string]int64, error) {
	rss := map[string]int64{}
	for _, pid := range pids {
		v, err := measure.RSS(pid)
		if err != nil {
			return nil, err
		}
		rss[measure.Command(pid)] += v
	}
	return rss, nil
}

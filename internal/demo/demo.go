package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"text/tabwriter"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/webui"
)

// Options are the demo's settings: cmd/holdfast binds them to the flags of `holdfast demo`.
type Options struct {
	// Clusters is the number of target clusters.
	Clusters int
	// Nodes is the number of simulated nodes (kube-scheduler and kwok) per target, so that the
	// sample Deployments' pods run and their services become healthy; 0: none, pods stay Pending.
	Nodes int
	// Dir holds the kubeconfigs and control-plane data; empty means a temporary directory.
	Dir string
	// KeepRunning keeps the fleet running after the walk-through, until ctx is done, with the
	// web view (holdfast ui) served on UIAddress unless it is empty.
	KeepRunning bool
	UIAddress   string
	// ProbeInterval and ConnectionGrace are the controller's cluster health settings.
	ProbeInterval   time.Duration
	ConnectionGrace time.Duration
	// SkipClusterHealth skips the API server outage and broken kubeconfig steps.
	SkipClusterHealth bool
	// WaitTimeout bounds the wait for the sample services at each step.
	WaitTimeout time.Duration
	// RunVerb runs one of holdfast's own CLI verbs (drift, history or correct) with args,
	// printing to out, as a user would type it. The demo shows them at work in Report mode.
	RunVerb func(ctx context.Context, out io.Writer, verb string, args ...string) error
}

// Run starts a local fleet with the Holdfast controller and walks through what Holdfast does,
// printing to out; every process it starts is stopped before it returns.
func Run(ctx context.Context, out io.Writer, o Options) error {
	return o.run(ctx, out)
}

func (o *Options) run(ctx context.Context, out io.Writer) (retErr error) {
	if o.Clusters < 1 {
		return fmt.Errorf("--clusters must be at least 1")
	}
	if o.RunVerb == nil {
		return fmt.Errorf("the demo needs Options.RunVerb to run the CLI verbs")
	}
	begin := time.Now()
	step := func(format string, args ...any) { fmt.Fprintf(out, "\n==> "+format+"\n", args...) }
	var timings []timing
	timed := func(what string, start time.Time) { timings = append(timings, timing{what, time.Since(start)}) }

	if o.Nodes > 0 {
		step("Starting a hub and %d target clusters (etcd, kube-apiserver, kube-controller-manager each; kube-scheduler and kwok with %d simulated nodes on each target)", o.Clusters, o.Nodes)
	} else {
		step("Starting a hub and %d target clusters (etcd, kube-apiserver, kube-controller-manager each)", o.Clusters)
	}
	start := time.Now()
	f, err := localfleet.Up(ctx, localfleet.Options{Clusters: o.Clusters, Dir: o.Dir, Nodes: o.Nodes})
	if err != nil {
		return err
	}
	defer func() {
		step("Stopping every control plane")
		retErr = errors.Join(retErr, f.Stop())
	}()
	fmt.Fprintf(out, "Control planes up in %s; hub kubeconfig: %s\n", since(start), f.HubKubeconfigPath())
	timed("Control planes up", start)

	step("Running the Holdfast controller against the hub (probe every %s, connection grace %s)", o.ProbeInterval, o.ConnectionGrace)
	// The platform namespaces: the Clusters' (Push and Pull) and the templates'.
	stopController, err := f.StartController(ctx, controller.Options{PlatformNamespaces: append([]string{f.Namespace, demoTemplateNamespace}, pullPlatformNamespaces...),
		ProbeInterval: o.ProbeInterval, ConnectionGrace: o.ConnectionGrace})
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, stopController()) }()
	start = time.Now()
	if err := f.WaitClustersReady(ctx, 2*time.Minute); err != nil {
		return err
	}
	fmt.Fprintf(out, "Every Cluster Ready %s after the controller started\n", since(start))
	timed("Clusters Ready", start)
	if err := o.printFleet(ctx, out, f); err != nil {
		return err
	}

	if !o.SkipClusterHealth {
		step("Cluster health: an API server outage and a broken kubeconfig")
		start = time.Now()
		if err := o.clusterHealth(ctx, out, f); err != nil {
			return err
		}
		timed("Cluster health (outage, broken kubeconfig)", start)
	}

	if err := o.services(ctx, out, f, step, timed); err != nil {
		return err
	}

	step("Pull mode: a cluster the hub cannot reach, kept by its agent, also while the hub is away")
	start = time.Now()
	if err := o.pull(ctx, out, f); err != nil {
		return err
	}
	timed("Pull cluster (deployed by its agent, 2 edits put back, 1 with the hub away)", start)

	step("Timings")
	if err := printTimings(out, timings, begin); err != nil {
		return err
	}

	if o.KeepRunning {
		return o.keepRunning(ctx, out, f, step)
	}
	return nil
}

// services shows what Holdfast does with the service sets: deploys them, and handles drift in
// Correct and in Report mode and with prevention.
func (o *Options) services(ctx context.Context, out io.Writer, f *localfleet.Fleet, step func(string, ...any), timed func(string, time.Time)) error {
	d, err := newServiceDemo(ctx, out, f, step, o.WaitTimeout, o.RunVerb)
	if err != nil {
		return err
	}
	d.nodes = o.Nodes
	defer d.close()
	if err := d.run(ctx, timed); err != nil {
		return err
	}

	step("Drift: someone changes a cluster by hand")
	start := time.Now()
	if err := d.drift(ctx, timed); err != nil {
		return err
	}
	timed("Drift section (3 changes corrected, 1 left alone, Events)", start)

	step("Drift in Report mode: recorded, left for a human, corrected on request")
	if err := d.reportThenCorrect(ctx, timed); err != nil {
		return err
	}

	step("Prevention: the target's API server refuses the change; break-glass may, and is named")
	return d.prevent(ctx, timed)
}

// printTimings prints how long each part of the demo took, and the whole since begin.
func printTimings(out io.Writer, timings []timing, begin time.Time) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, t := range timings {
		fmt.Fprintf(tw, "%s\t%s\n", t.what, fleetview.RoundDuration(t.took))
	}
	fmt.Fprintf(tw, "Total, before stopping\t%s\n", since(begin))
	return tw.Flush()
}

// keepRunning serves the web view of the fleet, says where, and waits for ctx to end.
func (o *Options) keepRunning(ctx context.Context, out io.Writer, f *localfleet.Fleet, step func(string, ...any)) error {
	if o.UIAddress == "" {
		step("The fleet keeps running; hub kubeconfig %s. Press Ctrl-C to stop.", f.HubKubeconfigPath())
		<-ctx.Done()
		return nil
	}
	srv, err := webui.New(f.Hub.RESTConfig(), ctrl.Log.WithName("ui"))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.UIAddress)
	if err != nil {
		return fmt.Errorf("serving the web view on %s: %w", o.UIAddress, err)
	}
	step("The fleet keeps running; hub kubeconfig %s.\nWeb view: %s (the same as holdfast ui --kubeconfig %s). Press Ctrl-C to stop.",
		f.HubKubeconfigPath(), srv.URLs(ln.Addr())[0], f.HubKubeconfigPath())
	return srv.Serve(ctx, ln)
}

type timing struct {
	what string
	took time.Duration
}

func (o *Options) printFleet(ctx context.Context, out io.Writer, f *localfleet.Fleet) error {
	clusters, err := f.Clusters(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	return fleetview.PrintClusters(out, clusters)
}

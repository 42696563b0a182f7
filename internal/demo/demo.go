package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/localfleet"
)

// Options are the demo's settings: cmd/holdfast binds them to the flags of `holdfast demo`.
type Options struct {
	// Clusters is the number of target clusters.
	Clusters int
	// Dir holds the kubeconfigs and control-plane data; empty means a temporary directory.
	Dir string
	// KeepRunning keeps the fleet running after the walk-through, until ctx is done.
	KeepRunning bool
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

	step("Starting a hub and %d target clusters (etcd, kube-apiserver, kube-controller-manager each)", o.Clusters)
	start := time.Now()
	f, err := localfleet.Up(ctx, localfleet.Options{Clusters: o.Clusters, Dir: o.Dir})
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
	stopController, err := StartController(ctx, f, controller.Options{ProbeInterval: o.ProbeInterval, ConnectionGrace: o.ConnectionGrace})
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, stopController()) }()
	start = time.Now()
	if err := WaitClustersReady(ctx, f, 2*time.Minute); err != nil {
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

	d, err := newServiceDemo(ctx, out, f, step, o.WaitTimeout, o.RunVerb)
	if err != nil {
		return err
	}
	defer d.close()
	if err := d.run(ctx, timed); err != nil {
		return err
	}

	step("Drift: someone changes a cluster by hand")
	start = time.Now()
	if err := d.drift(ctx, timed); err != nil {
		return err
	}
	timed("Drift section (3 changes corrected, 1 left alone, Events)", start)

	step("Drift in Report mode: recorded, left for a human, corrected on request")
	if err := d.reportThenCorrect(ctx, timed); err != nil {
		return err
	}

	step("Timings")
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, t := range timings {
		fmt.Fprintf(tw, "%s\t%s\n", t.what, fleetview.RoundDuration(t.took))
	}
	fmt.Fprintf(tw, "Total, before stopping\t%s\n", since(begin))
	if err := tw.Flush(); err != nil {
		return err
	}

	if o.KeepRunning {
		step("The fleet keeps running; hub kubeconfig %s. Press Ctrl-C to stop.", f.HubKubeconfigPath())
		<-ctx.Done()
	}
	return nil
}

type timing struct {
	what string
	took time.Duration
}

// clusterHealth stops one target's API server until its Cluster is reported Unreachable, starts
// it again, then breaks and repairs another target's kubeconfig Secret, one line per event.
func (o *Options) clusterHealth(ctx context.Context, out io.Writer, f *localfleet.Fleet) error {
	last := f.Targets[len(f.Targets)-1]
	key := client.ObjectKey{Namespace: f.Namespace, Name: last.Name()}
	start := time.Now()
	if err := last.StopAPIServer(); err != nil {
		return err
	}
	if err := waitConnected(ctx, f, key, metav1.ConditionFalse); err != nil {
		return err
	}
	fmt.Fprintf(out, "API server of %s stopped: %s after %s (grace %s)\n", last.Name(), connectedString(ctx, f, key), since(start), o.ConnectionGrace)
	start = time.Now()
	if err := last.StartAPIServer(ctx); err != nil {
		return err
	}
	if err := waitConnected(ctx, f, key, metav1.ConditionTrue); err != nil {
		return err
	}
	fmt.Fprintf(out, "API server of %s started again: %s after %s, with no restart of anything\n", last.Name(), connectedString(ctx, f, key), since(start))

	first := f.Targets[0]
	key = client.ObjectKey{Namespace: f.Namespace, Name: first.Name()}
	start = time.Now()
	if err := setKubeconfig(ctx, f, first.Name(), []byte("this is not a kubeconfig")); err != nil {
		return err
	}
	if err := waitConnected(ctx, f, key, metav1.ConditionFalse); err != nil {
		return err
	}
	fmt.Fprintf(out, "Secret %s replaced with garbage: %s after %s\n", fleet.KubeconfigSecretName(first.Name()), connectedString(ctx, f, key), since(start))
	start = time.Now()
	if err := setKubeconfig(ctx, f, first.Name(), first.Kubeconfig()); err != nil {
		return err
	}
	if err := WaitClustersReady(ctx, f, time.Minute); err != nil {
		return err
	}
	fmt.Fprintf(out, "Secret %s restored: every Cluster Ready again after %s\n", fleet.KubeconfigSecretName(first.Name()), since(start))
	return nil
}

// connectedString is the Cluster's Connected condition as "Connected=False (Reason: message)".
func connectedString(ctx context.Context, f *localfleet.Fleet, key client.ObjectKey) string {
	c := &holdfastv1.Cluster{}
	if err := f.HubClient().Get(ctx, key, c); err != nil {
		return fmt.Sprintf("Cluster unreadable: %v", err)
	}
	cond := conditions.Get(c, holdfastv1.ClusterConnectedCondition)
	if cond == nil {
		return "Connected unknown"
	}
	s := fmt.Sprintf("Connected=%s (%s", cond.Status, cond.Reason)
	if cond.Message != "" {
		s += ": " + fleetview.Truncate(cond.Message, 80)
	}
	return s + ")"
}

func (o *Options) printFleet(ctx context.Context, out io.Writer, f *localfleet.Fleet) error {
	clusters, err := f.Clusters(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	return fleetview.PrintClusters(out, clusters)
}

func setKubeconfig(ctx context.Context, f *localfleet.Fleet, cluster string, data []byte) error {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: f.Namespace, Name: fleet.KubeconfigSecretName(cluster)}
	if err := f.HubClient().Get(ctx, key, secret); err != nil {
		return fmt.Errorf("reading Secret %s: %w", key, err)
	}
	secret.Data[holdfastv1.DefaultKubeconfigKey] = data
	if err := f.HubClient().Update(ctx, secret); err != nil {
		return fmt.Errorf("updating Secret %s: %w", key, err)
	}
	return nil
}

// waitConnected waits until the Cluster's Connected condition has the given status.
func waitConnected(ctx context.Context, f *localfleet.Fleet, key client.ObjectKey, want metav1.ConditionStatus) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		c := &holdfastv1.Cluster{}
		if err := f.HubClient().Get(ctx, key, c); err != nil {
			return false, nil //nolint:nilerr // keep polling until the timeout
		}
		cond := conditions.Get(c, holdfastv1.ClusterConnectedCondition)
		return cond != nil && cond.Status == want, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Cluster %s to be Connected=%s: %w", key, want, err)
	}
	return nil
}

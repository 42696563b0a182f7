package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/localfleet"
)

type demoOptions struct {
	clusters    int
	dir         string
	keepRunning bool
	probe       time.Duration
	grace       time.Duration
	skipHealth  bool
	timeout     time.Duration
}

func newDemoCommand() *cobra.Command {
	o := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a local fleet with the controller and show Holdfast at work",
		Long: `Starts a hub and target control planes on this machine, runs the Holdfast controller
against them and walks through what it does. Cluster health: the Clusters become Ready; a
target's API server goes away and comes back; a kubeconfig Secret is broken and repaired.
Deployment: the hello Helm chart is served on loopback (HTTP repository and OCI registry); a
sample fleet of ServiceTemplates and MultiClusterServices is declared on the hub and deployed to
the targets selected by label; the fleet table and what landed on each target are printed; a
template change rolls out to every cluster and a selector change moves a service from one
cluster to another. Drift: on one target, a value Holdfast set is edited, a managed object
deleted and a Deployment scaled by hand, as other field managers; each is put back at once
(sandbox-apps is in ContinuousWithDriftDetection mode), a label someone adds is left alone, and
the DriftCorrected Events are printed. Every process is stopped at the end (or on SIGINT, with
--keep-running).
The controller logs only errors here; --log-level info shows its work.`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{defaultLogLevelAnnotation: "error"},
		RunE:        func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), cmd.OutOrStdout()) },
	}
	cmd.Flags().IntVar(&o.clusters, "clusters", 2, "number of target clusters")
	cmd.Flags().StringVar(&o.dir, "dir", "", "directory for kubeconfigs and control-plane data (default: a temporary one)")
	cmd.Flags().BoolVar(&o.keepRunning, "keep-running", false, "keep the fleet running after the walk-through, until SIGINT")
	cmd.Flags().DurationVar(&o.probe, "cluster-probe-interval", time.Second, "time between two health probes of a cluster")
	cmd.Flags().DurationVar(&o.grace, "cluster-connection-grace", 5*time.Second, "how long failing probes keep a cluster Connected")
	cmd.Flags().BoolVar(&o.skipHealth, "skip-cluster-health", false, "skip the API server outage and broken kubeconfig steps")
	cmd.Flags().DurationVar(&o.timeout, "wait-timeout", 2*time.Minute, "how long to wait for the sample services at each step")
	return cmd
}

func (o *demoOptions) run(ctx context.Context, out io.Writer) (retErr error) {
	if o.clusters < 1 {
		return fmt.Errorf("--clusters must be at least 1")
	}
	begin := time.Now()
	step := func(format string, args ...any) { fmt.Fprintf(out, "\n==> "+format+"\n", args...) }
	var timings []timing
	timed := func(what string, start time.Time) { timings = append(timings, timing{what, time.Since(start)}) }

	step("Starting a hub and %d target clusters (etcd, kube-apiserver, kube-controller-manager each)", o.clusters)
	start := time.Now()
	f, err := localfleet.Up(ctx, localfleet.Options{Clusters: o.clusters, Dir: o.dir})
	if err != nil {
		return err
	}
	defer func() {
		step("Stopping every control plane")
		retErr = errors.Join(retErr, f.Stop())
	}()
	fmt.Fprintf(out, "Control planes up in %s; hub kubeconfig: %s\n", since(start), f.HubKubeconfigPath())
	timed("Control planes up", start)

	step("Running the Holdfast controller against the hub (probe every %s, connection grace %s)", o.probe, o.grace)
	stopController, err := startController(ctx, f, controller.Options{ProbeInterval: o.probe, ConnectionGrace: o.grace})
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, stopController()) }()
	start = time.Now()
	if err := waitClustersReady(ctx, f, 2*time.Minute); err != nil {
		return err
	}
	fmt.Fprintf(out, "Every Cluster Ready %s after the controller started\n", since(start))
	timed("Clusters Ready", start)
	if err := o.printFleet(ctx, out, f); err != nil {
		return err
	}

	if !o.skipHealth {
		step("Cluster health: an API server outage and a broken kubeconfig")
		start = time.Now()
		if err := o.clusterHealth(ctx, out, f); err != nil {
			return err
		}
		timed("Cluster health (outage, broken kubeconfig)", start)
	}

	d, err := newServiceDemo(ctx, out, f, step, o.timeout)
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

	if o.keepRunning {
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
func (o *demoOptions) clusterHealth(ctx context.Context, out io.Writer, f *localfleet.Fleet) error {
	last := f.Targets[len(f.Targets)-1]
	key := client.ObjectKey{Namespace: f.Namespace, Name: last.Name()}
	start := time.Now()
	if err := last.StopAPIServer(); err != nil {
		return err
	}
	if err := waitConnected(ctx, f, key, metav1.ConditionFalse); err != nil {
		return err
	}
	fmt.Fprintf(out, "API server of %s stopped: %s after %s (grace %s)\n", last.Name(), connectedString(ctx, f, key), since(start), o.grace)
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
	if err := waitClustersReady(ctx, f, time.Minute); err != nil {
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
	cond := findCondition(c.Status.Conditions, holdfastv1.ClusterConnectedCondition)
	if cond == nil {
		return "Connected unknown"
	}
	s := fmt.Sprintf("Connected=%s (%s", cond.Status, cond.Reason)
	if cond.Message != "" {
		s += ": " + fleetview.Truncate(cond.Message, 80)
	}
	return s + ")"
}

func (o *demoOptions) printFleet(ctx context.Context, out io.Writer, f *localfleet.Fleet) error {
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
		for _, cond := range c.Status.Conditions {
			if cond.Type == holdfastv1.ClusterConnectedCondition {
				return cond.Status == want, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Cluster %s to be Connected=%s: %w", key, want, err)
	}
	return nil
}

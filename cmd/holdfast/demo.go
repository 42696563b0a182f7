package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/localfleet"
)

type demoOptions struct {
	clusters    int
	dir         string
	keepRunning bool
	probe       time.Duration
	grace       time.Duration
}

func newDemoCommand() *cobra.Command {
	o := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a local fleet with the controller and show Holdfast at work",
		Long: `Starts a hub and target control planes on this machine, runs the Holdfast controller
against them and walks through what it does, printing the fleet after each step: the Clusters
become Ready; a target's API server goes away and comes back; a kubeconfig Secret is broken and
repaired. Every process is stopped at the end (or on SIGINT, with --keep-running).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), cmd.OutOrStdout()) },
	}
	cmd.Flags().IntVar(&o.clusters, "clusters", 2, "number of target clusters")
	cmd.Flags().StringVar(&o.dir, "dir", "", "directory for kubeconfigs and control-plane data (default: a temporary one)")
	cmd.Flags().BoolVar(&o.keepRunning, "keep-running", false, "keep the fleet running after the walk-through, until SIGINT")
	cmd.Flags().DurationVar(&o.probe, "cluster-probe-interval", time.Second, "time between two health probes of a cluster")
	cmd.Flags().DurationVar(&o.grace, "cluster-connection-grace", 5*time.Second, "how long failing probes keep a cluster Connected")
	return cmd
}

func (o *demoOptions) run(ctx context.Context, out io.Writer) (retErr error) {
	if o.clusters < 1 {
		return fmt.Errorf("--clusters must be at least 1")
	}
	step := func(format string, args ...any) { fmt.Fprintf(out, "\n==> "+format+"\n", args...) }

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
	fmt.Fprintf(out, "Control planes up in %s; hub kubeconfig: %s\n", time.Since(start).Round(time.Millisecond), f.HubKubeconfigPath())

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
	fmt.Fprintf(out, "Every Cluster Ready %s after the controller started\n", time.Since(start).Round(time.Millisecond))
	if err := o.printFleet(ctx, out, f); err != nil {
		return err
	}

	last := f.Targets[len(f.Targets)-1]
	key := client.ObjectKey{Namespace: f.Namespace, Name: last.Name()}
	step("Outage: stopping the API server of %s", last.Name())
	start = time.Now()
	if err := last.StopAPIServer(); err != nil {
		return err
	}
	if err := waitConnected(ctx, f, key, metav1.ConditionFalse); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s reported not Connected %s after the outage began (grace %s)\n", last.Name(), time.Since(start).Round(time.Millisecond), o.grace)
	if err := o.printFleet(ctx, out, f); err != nil {
		return err
	}

	step("Recovery: starting the API server of %s again", last.Name())
	start = time.Now()
	if err := last.StartAPIServer(ctx); err != nil {
		return err
	}
	if err := waitConnected(ctx, f, key, metav1.ConditionTrue); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s Connected again %s later, with no restart of anything\n", last.Name(), time.Since(start).Round(time.Millisecond))

	first := f.Targets[0]
	key = client.ObjectKey{Namespace: f.Namespace, Name: first.Name()}
	step("Bad input: replacing the kubeconfig in Secret %s with something that is not one", fleet.KubeconfigSecretName(first.Name()))
	if err := setKubeconfig(ctx, f, first.Name(), []byte("this is not a kubeconfig")); err != nil {
		return err
	}
	if err := waitConnected(ctx, f, key, metav1.ConditionFalse); err != nil {
		return err
	}
	if err := o.printFleet(ctx, out, f); err != nil {
		return err
	}
	step("Repair: restoring the kubeconfig")
	if err := setKubeconfig(ctx, f, first.Name(), first.Kubeconfig()); err != nil {
		return err
	}
	if err := waitClustersReady(ctx, f, time.Minute); err != nil {
		return err
	}
	if err := o.printFleet(ctx, out, f); err != nil {
		return err
	}

	if o.keepRunning {
		step("The fleet keeps running; hub kubeconfig %s. Press Ctrl-C to stop.", f.HubKubeconfigPath())
		<-ctx.Done()
	}
	return nil
}

func (o *demoOptions) printFleet(ctx context.Context, out io.Writer, f *localfleet.Fleet) error {
	clusters, err := f.Clusters(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	return printClusters(out, clusters)
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

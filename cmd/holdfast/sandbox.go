package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/localfleet"
)

type sandboxUpOptions struct {
	clusters            int
	dir                 string
	withController      bool
	noControllerManager bool
	readyTimeout        time.Duration
}

func newSandboxCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Local control planes for development, tests and demos",
	}
	cmd.AddCommand(newSandboxUpCommand())
	return cmd
}

func newSandboxUpCommand() *cobra.Command {
	o := &sandboxUpOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a hub and N target control planes, registered as Clusters, until interrupted",
		Long: `Starts a hub control plane with Holdfast's CRDs and N target control planes (etcd,
kube-apiserver and kube-controller-manager each), writes DIR/hub.kubeconfig and
DIR/cluster-<i>.kubeconfig, registers every target as a Cluster in namespace holdfast-system and,
unless --with-controller=false, runs the Holdfast controller against the hub. Prints one line
starting with "Sandbox ready" once every Cluster is Ready, then runs until SIGINT or SIGTERM and
stops every process it started.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	cmd.Flags().IntVar(&o.clusters, "clusters", 2, "number of target clusters")
	cmd.Flags().StringVar(&o.dir, "dir", "", "directory for kubeconfigs and control-plane data (default: a temporary one)")
	cmd.Flags().BoolVar(&o.withController, "with-controller", true, "run the Holdfast controller against the hub")
	cmd.Flags().BoolVar(&o.noControllerManager, "no-controller-manager", false, "do not run kube-controller-manager on the targets")
	cmd.Flags().DurationVar(&o.readyTimeout, "ready-timeout", 3*time.Minute, "how long to wait for the Clusters to become Ready")
	return cmd
}

func (o *sandboxUpOptions) run(cmd *cobra.Command) (retErr error) {
	ctx := cmd.Context()
	f, err := localfleet.Up(ctx, localfleet.Options{Clusters: o.clusters, Dir: o.dir, NoControllerManager: o.noControllerManager})
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, f.Stop()) }()

	if o.withController {
		stopController, err := startController(ctx, f, controller.Options{})
		if err != nil {
			return err
		}
		defer func() { retErr = errors.Join(retErr, stopController()) }()
		if err := waitClustersReady(ctx, f, o.readyTimeout); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(f.Targets))
	for _, t := range f.Targets {
		names = append(names, t.Name()+"="+f.TargetKubeconfigPath(t.Name()))
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Sandbox ready: hub=%s clusters=%s\n", f.HubKubeconfigPath(), strings.Join(names, ","))
	<-ctx.Done()
	ctrl.Log.Info("Stopping the sandbox")
	return nil
}

// startController runs the Holdfast manager against the fleet's hub in the background; the
// returned function stops it and waits for it to end.
func startController(ctx context.Context, f *localfleet.Fleet, opts controller.Options) (func() error, error) {
	if opts.MetricsAddr == "" {
		opts.MetricsAddr = "0"
	}
	if opts.HealthAddr == "" {
		opts.HealthAddr = "0"
	}
	mgr, _, err := controller.NewManager(ctx, f.Hub.RESTConfig(), opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() error {
		cancel()
		if err := <-done; err != nil {
			return fmt.Errorf("running the controller: %w", err)
		}
		return nil
	}, nil
}

// waitClustersReady waits until every registered Cluster is Ready.
func waitClustersReady(ctx context.Context, f *localfleet.Fleet, timeout time.Duration) error {
	var last []holdfastv1.Cluster
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		clusters, err := f.Clusters(ctx)
		if err != nil {
			return false, nil //nolint:nilerr // the hub may be busy; keep polling until the timeout
		}
		last = clusters
		for i := range clusters {
			if !clusterReady(&clusters[i]) {
				return false, nil
			}
		}
		return len(clusters) == len(f.Targets), nil
	})
	if err != nil {
		var notReady []string
		for i := range last {
			if !clusterReady(&last[i]) {
				notReady = append(notReady, last[i].Name)
			}
		}
		return fmt.Errorf("waiting for Clusters %v to become Ready: %w", notReady, err)
	}
	return nil
}

func clusterReady(c *holdfastv1.Cluster) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == holdfastv1.ReadyCondition {
			return cond.Status == metav1.ConditionTrue
		}
	}
	return false
}

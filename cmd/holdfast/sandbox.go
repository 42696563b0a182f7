package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/localfleet"
)

type sandboxUpOptions struct {
	clusters            int
	dir                 string
	withController      bool
	noControllerManager bool
	agents              bool
	nodes               int
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
kube-apiserver and kube-controller-manager each; with --nodes, kube-scheduler and kwok too, whose
simulated nodes run the targets' pods: Deployments become Available, and pods annotated
holdfast.dev/simulate-failure=true crash-loop), writes DIR/hub.kubeconfig and
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
	cmd.Flags().IntVar(&o.nodes, "nodes", 1, "simulated nodes per target cluster (kube-scheduler and kwok): Deployments become Available, so Ready (applied and healthy) behaves as on a real cluster; 0 runs none and pods stay Pending")
	cmd.Flags().BoolVar(&o.agents, "agents", false, "register the targets in Pull mode: each runs a Holdfast agent (in this process, with its own cluster's kubeconfig only) and the hub holds no kubeconfig of it")
	cmd.Flags().DurationVar(&o.readyTimeout, "ready-timeout", 3*time.Minute, "how long to wait for the Clusters to become Ready")
	return cmd
}

func (o *sandboxUpOptions) run(cmd *cobra.Command) (retErr error) {
	ctx := cmd.Context()
	if o.agents && !o.withController {
		return errors.New("--agents needs --with-controller: the controller gives each agent its identity on the hub")
	}
	f, err := localfleet.Up(ctx, localfleet.Options{Clusters: o.clusters, Dir: o.dir, NoControllerManager: o.noControllerManager, Nodes: o.nodes, Agents: o.agents})
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, f.Stop()) }()

	if o.withController {
		stopController, err := f.StartController(ctx, controller.Options{})
		if err != nil {
			return err
		}
		defer func() { retErr = errors.Join(retErr, stopController()) }()
		if o.agents {
			stopAgents, err := f.StartAgents(ctx)
			if err != nil {
				return err
			}
			// Before the controller's stop: the agents' last status writes go to a running hub.
			defer func() { retErr = errors.Join(retErr, stopAgents()) }()
		}
		if err := f.WaitClustersReady(ctx, o.readyTimeout); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(f.Targets))
	for _, t := range f.Targets {
		names = append(names, t.Name()+"="+f.TargetKubeconfigPath(t.Name()))
	}
	mode := ""
	if o.agents {
		mode = " (Pull: each runs its agent here; the hub holds no kubeconfig of them)"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Sandbox ready: hub=%s clusters=%s%s\n", f.HubKubeconfigPath(), strings.Join(names, ","), mode)
	<-ctx.Done()
	ctrl.Log.Info("Stopping the sandbox")
	return nil
}

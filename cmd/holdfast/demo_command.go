package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"holdfast.dev/holdfast/internal/demo"
	"holdfast.dev/holdfast/internal/webui"
)

func newDemoCommand() *cobra.Command {
	o := demo.Options{RunVerb: runVerb}
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
the DriftCorrected Events are printed. Pull mode: a third control plane, edge, is registered in
Pull mode and its agent runs here with edge's kubeconfig only; the agent applies a service set
there, alice's edit is put back and recorded on the hub with her name, and with the hub's API
server stopped her next edit is put back all the same and recorded once it is back. Every process is stopped at the end (or on SIGINT, with
--keep-running, which also serves the web view of the fleet, holdfast ui, and prints its URL).
The controller logs only errors here; --log-level info shows its work.`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{defaultLogLevelAnnotation: "error"},
		RunE:        func(cmd *cobra.Command, _ []string) error { return demo.Run(cmd.Context(), cmd.OutOrStdout(), o) },
	}
	cmd.Flags().IntVar(&o.Clusters, "clusters", 2, "number of target clusters")
	cmd.Flags().IntVar(&o.Nodes, "nodes", 2, "simulated nodes per target cluster (kube-scheduler and kwok), so the sample Deployments' pods run and their services become healthy; 0: none")
	cmd.Flags().StringVar(&o.Dir, "dir", "", "directory for kubeconfigs and control-plane data (default: a temporary one)")
	cmd.Flags().BoolVar(&o.KeepRunning, "keep-running", false, "keep the fleet running after the walk-through, until SIGINT, with the web view (holdfast ui) on --ui-address")
	cmd.Flags().StringVar(&o.UIAddress, "ui-address", webui.DefaultAddress, "where --keep-running serves the web view; empty: not served")
	cmd.Flags().DurationVar(&o.ProbeInterval, "cluster-probe-interval", time.Second, "time between two health probes of a cluster")
	cmd.Flags().DurationVar(&o.ConnectionGrace, "cluster-connection-grace", 5*time.Second, "how long failing probes keep a cluster Connected")
	cmd.Flags().BoolVar(&o.SkipClusterHealth, "skip-cluster-health", false, "skip the API server outage and broken kubeconfig steps")
	cmd.Flags().DurationVar(&o.WaitTimeout, "wait-timeout", 2*time.Minute, "how long to wait for the sample services at each step")
	return cmd
}

// runVerb runs one of holdfast's own CLI verbs for the demo, printing to out. The verb runs on
// its own, without the root command's logging set-up, which would replace the demo's.
func runVerb(ctx context.Context, out io.Writer, verb string, args ...string) error {
	verbs := map[string]func() *cobra.Command{"drift": newDriftCommand, "history": newHistoryCommand, "correct": newCorrectCommand}
	newVerb, ok := verbs[verb]
	if !ok {
		return fmt.Errorf("the demo runs no verb %q", verb)
	}
	cmd := newVerb()
	cmd.SetOut(out)
	cmd.SetErr(out)
	cmd.SetArgs(args)
	return cmd.ExecuteContext(ctx)
}

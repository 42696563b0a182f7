package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	helmvalues "helm.sh/helm/v4/pkg/cli/values"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/onboard"
	"holdfast.dev/holdfast/internal/version"
)

// pullOptions are the flags of `holdfast cluster add --pull`.
type pullOptions struct {
	enabled           bool
	hubServer         string
	bootstrapDuration time.Duration
	clusterRole       string
	image             string
	agentValues       helmvalues.Options
	kubeconfigOnly    bool
	export            string
	wait              time.Duration
	controller        string
}

func (p *pullOptions) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&p.enabled, "pull", false, "register a cluster the hub cannot reach, named by the argument: its agent connects to the hub")
	fs.StringVar(&p.hubServer, "hub-server", "", "with --pull: the hub API server's address as the cluster reaches it (default: the hub context's)")
	fs.DurationVar(&p.bootstrapDuration, "bootstrap-duration", onboard.DefaultBootstrapDuration, "with --pull: validity of the bootstrap token, which the agent trades for its own at once")
	fs.StringVar(&p.clusterRole, "agent-cluster-role", onboard.DefaultAgentClusterRole, "with --pull: the ClusterRole the agent is bound to on its cluster (what Holdfast may do there); unless set, the agent values' rbac.clusterRole wins")
	fs.StringVar(&p.image, "agent-image", "ghcr.io/holdfast-dev/holdfast:"+version.Get().Version, "with --pull: the agent's container image; unless set, the agent values' image wins")
	fs.StringArrayVar(&p.agentValues.ValueFiles, "agent-values", nil, "with --pull: values of the agent chart (charts/holdfast-agent) from a YAML file, e.g. rbac.clusterRole \"\" and rbac.rules for a narrower ClusterRole (can repeat)")
	fs.StringArrayVar(&p.agentValues.Values, "agent-set", nil, "with --pull: a value of the agent chart, as helm --set takes it: key=value[,key=value] (can repeat)")
	fs.BoolVar(&p.kubeconfigOnly, "hub-kubeconfig-only", false, "with --pull: print (or write to --export) only the kubeconfig the agent bootstraps with, for helm install of charts/holdfast-agent with --set-file hub.kubeconfig=FILE")
	fs.StringVar(&p.export, "export", "", "with --pull: write what to apply on the cluster to this file (mode 0600) instead of printing it")
	fs.DurationVar(&p.wait, "wait", time.Minute, "with --pull: how long to wait for the controller to create the agent's identity")
	fs.StringVar(&p.controller, "controller-service-account", onboard.DefaultController.String(), "with --pull: the controller's ServiceAccount on the hub (namespace/name), let publish the cluster's declarations in its namespace")
}

// agentOptions are the agent chart's values the flags give for the agent of cluster: those of
// --agent-values and --agent-set, with --agent-image and --agent-cluster-role over them when
// set, and --agent-image's default when they name no image.
func (p *pullOptions) agentOptions(fs *pflag.FlagSet, cluster client.ObjectKey) (onboard.AgentOptions, error) {
	values, err := p.agentValues.MergeValues(nil)
	if err != nil {
		return onboard.AgentOptions{}, fmt.Errorf("reading the agent's values: %w", err)
	}
	o := onboard.AgentOptions{Cluster: cluster, Values: values}
	if _, named := values["image"]; fs.Changed("agent-image") || !named {
		o.Image = p.image
	}
	if fs.Changed("agent-cluster-role") {
		o.ClusterRole = p.clusterRole
	}
	return o, nil
}

// addPull registers the Pull cluster name and prints or writes the agent's manifests (or, with
// --hub-kubeconfig-only, its hub kubeconfig). They hold a bootstrap credential: written to a
// file, only its owner may read it.
func (o *clusterOptions) addPull(cmd *cobra.Command, name string) error {
	ctx := cmd.Context()
	if !cmd.Flags().Changed("namespace") {
		o.namespace = onboard.PullNamespace(name)
	}
	agentOpts, err := o.pull.agentOptions(cmd.Flags(), client.ObjectKey{Namespace: o.namespace, Name: name})
	if err != nil {
		return err
	}
	// Values the chart refuses are said before anything changes on the hub.
	if _, err := onboard.AgentManifests(ctx, []byte("# checked before registering"), agentOpts); err != nil {
		return err
	}
	cfg, err := o.config(o.hub.context)
	if err != nil {
		return err
	}
	hub, err := o.hubClient()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building a client of the hub %s: %w", cfg.Host, err)
	}
	controllerSA, err := namespacedName("--controller-service-account", o.pull.controller)
	if err != nil {
		return err
	}
	kubeconfig, err := onboard.RegisterPull(ctx, hub, cs, cfg, onboard.PullOptions{Name: name, Namespace: o.namespace, Labels: o.labels,
		HubServer: o.pull.hubServer, BootstrapDuration: o.pull.bootstrapDuration, Wait: o.pull.wait,
		Controller: controllerSA})
	if err != nil {
		return err
	}
	out, next := kubeconfig, "install charts/holdfast-agent with --set-file hub.kubeconfig="+o.pull.export
	if !o.pull.kubeconfigOnly {
		if out, err = onboard.AgentManifests(ctx, kubeconfig, agentOpts); err != nil {
			return err
		}
		next = "apply " + o.pull.export
	}
	if o.pull.export == "" {
		_, err = cmd.OutOrStdout().Write(out)
		return err
	}
	if err := os.WriteFile(o.pull.export, out, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", o.pull.export, err)
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "Cluster %s/%s added in Pull mode; %s on the cluster (it holds a bootstrap token valid for %s)\n",
		o.namespace, name, next, o.pull.bootstrapDuration)
	return err
}

func newClusterRevokeCommand() *cobra.Command {
	o := &clusterOptions{}
	cmd := &cobra.Command{
		Use:   "revoke NAME",
		Short: "End the hub access of a Pull cluster's agent at once",
		Long: `revoke deletes the agent's ServiceAccount on the hub, which ends every token issued for
it at once, and its bootstrap Secret. The controller gives the Cluster a new ServiceAccount; run
holdfast cluster add --pull NAME for a new bootstrap token when the agent is to come back.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("namespace") {
				o.namespace = onboard.PullNamespace(args[0])
			}
			hub, err := o.hubClient()
			if err != nil {
				return err
			}
			key := client.ObjectKey{Namespace: o.namespace, Name: args[0]}
			if err := onboard.RevokePull(cmd.Context(), hub, key); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Agent of Cluster %s revoked\n", key)
			return err
		},
	}
	o.hub.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "namespace of the Cluster on the hub (default: holdfast-pull-NAME)")
	return cmd
}

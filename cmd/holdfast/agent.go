package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"holdfast.dev/holdfast/internal/agent"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/onboard"
	"holdfast.dev/holdfast/internal/version"
)

// agentOptions are the flags of `holdfast agent`.
type agentOptions struct {
	kubeconfig, cluster, hubSecret string
	heartbeat, tokenLifetime       time.Duration
	// controller holds the per-cluster reconcile's options the agent's flags set.
	controller controller.Options
}

func newAgentCommand() *cobra.Command {
	o := &agentOptions{}
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the Holdfast agent of a Pull cluster, in that cluster",
		Long: `agent runs in a cluster the hub cannot reach (registered with holdfast cluster add --pull, which
prints the Deployment that runs it). It connects out to the hub with the kubeconfig in
--hub-kubeconfig-secret, trades the bootstrap token for a token of its own (kept in that Secret,
renewed before it expires), reports through its Lease, and runs the per-cluster reconcile
against its own cluster: it applies the declarations the hub published for it, corrects drift
and writes the status on the hub, and keeps correcting while the hub is away (docs/agent.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := namespacedName("--cluster", o.cluster)
			if err != nil {
				return err
			}
			secret, err := namespacedName("--hub-kubeconfig-secret", o.hubSecret)
			if err != nil {
				return err
			}
			own, err := loadHubConfig(o.kubeconfig)
			if err != nil {
				return err
			}
			scheme, err := controller.Scheme()
			if err != nil {
				return err
			}
			ctx := ctrl.LoggerInto(cmd.Context(), ctrl.Log.WithName("agent"))
			return agent.Run(ctx, agent.Options{Cluster: key, Own: own, HubSecret: secret, Scheme: scheme,
				Version: version.Get().Version, Heartbeat: o.heartbeat, TokenLifetime: o.tokenLifetime, Controller: o.controller})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the agent's own cluster; empty means in-cluster, then $KUBECONFIG")
	fs.StringVar(&o.cluster, "cluster", "", "the agent's Cluster on the hub, namespace/name")
	fs.StringVar(&o.hubSecret, "hub-kubeconfig-secret", onboard.Namespace+"/"+onboard.AgentHubSecret, "Secret on the agent's own cluster, namespace/name, holding its hub kubeconfig")
	fs.DurationVar(&o.heartbeat, "heartbeat", agent.DefaultHeartbeat, "how often the agent renews its Lease on the hub")
	fs.DurationVar(&o.tokenLifetime, "token-lifetime", agent.DefaultTokenLifetime, "validity the agent asks for its own hub tokens (renewed at 80 %)")
	addHubLimitFlags(fs, &o.controller)
	return cmd
}

// namespacedName parses a flag's namespace/name.
func namespacedName(flag, value string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(value, "/")
	if !ok || ns == "" || name == "" {
		return types.NamespacedName{}, fmt.Errorf("%s %q: want namespace/name", flag, value)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

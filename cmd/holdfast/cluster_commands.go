package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/onboard"
)

// clusterOptions are the flags of `holdfast cluster add` and `remove`.
type clusterOptions struct {
	hub           hubOptions
	name          string
	namespace     string
	labels        map[string]string
	namespaces    []string
	tokenDuration time.Duration
	targetContext string
	pull          pullOptions
}

func newClusterCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "cluster", Short: "Add clusters to the fleet and remove them"}
	cmd.AddCommand(newClusterAddCommand(), newClusterRemoveCommand(), newClusterRevokeCommand())
	return cmd
}

func newClusterAddCommand() *cobra.Command {
	o := &clusterOptions{}
	cmd := &cobra.Command{
		Use:   "add CONTEXT | add --pull NAME",
		Short: "Give Holdfast its own identity on the cluster of a kubeconfig context and register it on the hub, or register a Pull cluster",
		Long: `add reaches the cluster of CONTEXT (a context of the same kubeconfig as the hub's) with
your credentials, creates the ServiceAccount holdfast-system/holdfast-manager there with every
permission (cluster-wide, or only in the namespaces --target-namespaces lists), requests a token
for it, and registers the cluster on the hub: the Secret <name>-kubeconfig and the Cluster.
Run it again to rotate the token or change the labels.

With --pull, add registers a cluster the hub cannot reach, named NAME: the Cluster, in Pull mode,
alone in the hub namespace holdfast-pull-NAME (unless --namespace), whose agent identity the
controller creates; and prints (or writes to --export) what to apply on that cluster: the
Holdfast agent, as the agent chart (charts/holdfast-agent) renders it with --agent-values and
--agent-set, with a bootstrap token it trades for its own at once. With --hub-kubeconfig-only it
prints the agent's hub kubeconfig alone, to install the chart with Helm. Run it again for a new
bootstrap token (the one before ends). See docs/agent.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if o.pull.enabled {
				return o.addPull(cmd, args[0])
			}
			cfg, cs, err := o.target(args[0])
			if err != nil {
				return err
			}
			if o.name == "" {
				o.name = clusterName(args[0])
			}
			kubeconfig, err := onboard.Grant(ctx, cs, cfg, onboard.Options{Namespaces: o.namespaces, TokenDuration: o.tokenDuration})
			if err != nil {
				return err
			}
			hub, err := o.hubClient()
			if err != nil {
				return err
			}
			c, err := fleet.Register(ctx, hub, fleet.Registration{Namespace: o.namespace, Name: o.name, Labels: o.labels, Kubeconfig: kubeconfig})
			if err != nil {
				return err
			}
			scope := "cluster-wide"
			if len(o.namespaces) > 0 {
				scope = "in namespaces " + strings.Join(o.namespaces, ", ")
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Cluster %s/%s added (Holdfast's access on it: %s)\n", c.Namespace, c.Name, scope)
			return err
		},
	}
	o.hub.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.name, "name", "", "name of the Cluster on the hub (default: the context's name, made a valid name)")
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", onboard.Namespace, "namespace of the Cluster on the hub")
	cmd.Flags().StringToStringVar(&o.labels, "labels", nil, "labels of the Cluster, which service sets select by: k=v,k2=v2")
	cmd.Flags().StringSliceVar(&o.namespaces, "target-namespaces", nil, "limit Holdfast to these existing namespaces of the cluster (default: cluster-wide)")
	cmd.Flags().DurationVar(&o.tokenDuration, "token-duration", onboard.DefaultTokenDuration, "validity of the token (the API server may shorten it); add again to rotate it")
	o.pull.addFlags(cmd.Flags())
	return cmd
}

func newClusterRemoveCommand() *cobra.Command {
	o := &clusterOptions{}
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a cluster from the fleet, and with --target-context Holdfast's identity on it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			hub, err := o.hubClient()
			if err != nil {
				return err
			}
			key := client.ObjectKey{Namespace: o.namespace, Name: args[0]}
			if err := client.IgnoreNotFound(hub.Delete(ctx, &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})); err != nil {
				return fmt.Errorf("deleting Cluster %s: %w", key, err)
			}
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: fleet.KubeconfigSecretName(key.Name)}}
			if err := client.IgnoreNotFound(hub.Delete(ctx, secret)); err != nil {
				return fmt.Errorf("deleting Secret %s/%s: %w", secret.Namespace, secret.Name, err)
			}
			if o.targetContext != "" {
				_, cs, err := o.target(o.targetContext)
				if err != nil {
					return err
				}
				if err := onboard.Revoke(ctx, cs); err != nil {
					return err
				}
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Cluster %s removed\n", key)
			return err
		},
	}
	o.hub.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", onboard.Namespace, "namespace of the Cluster on the hub")
	cmd.Flags().StringVar(&o.targetContext, "target-context", "", "also delete Holdfast's ServiceAccount and permissions on the cluster of this context")
	return cmd
}

// target returns a config and clientset of the cluster of a context of the hub's kubeconfig.
func (o *clusterOptions) target(context string) (*rest.Config, kubernetes.Interface, error) {
	cfg, err := o.config(context)
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("building a client of context %q: %w", context, err)
	}
	return cfg, cs, nil
}

// hubClient returns a client of the hub (--context, default the current context) that knows
// Holdfast's types and the built-in ones (the kubeconfig Secret).
func (o *clusterOptions) hubClient() (client.Client, error) {
	cfg, err := o.config(o.hub.context)
	if err != nil {
		return nil, err
	}
	scheme, err := controller.Scheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("building a client of the hub %s: %w", cfg.Host, err)
	}
	return c, nil
}

// config loads a context ("" for the current one) of the kubeconfig, as kubectl does.
func (o *clusterOptions) config(context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.hub.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig context %q: %w", context, err)
	}
	return cfg, nil
}

// clusterName makes a context's name a valid Cluster name: lower case, [a-z0-9-], at most 63.
func clusterName(context string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(context) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 63 {
		name = strings.Trim(name[:63], "-")
	}
	return name
}

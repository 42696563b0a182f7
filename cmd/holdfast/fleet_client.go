package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// listPageSize bounds one List call: a fleet of a thousand clusters has thousands of status
// objects, each with up to 20 drift records; pages keep the API server's and our memory flat.
const listPageSize = 250

// The CLI reads and patches the hub at a pace a person waits for, not the client-go default of
// 5 requests per second.
const (
	cliQPS   = 50
	cliBurst = 100
)

const (
	outputTable = "table"
	outputJSON  = "json"
)

// hubOptions are the flags every fleet verb has: how to reach the hub and how to print.
type hubOptions struct {
	kubeconfig string
	context    string
	output     string
}

func (o *hubOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the hub (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)")
	fs.StringVar(&o.context, "context", "", "kubeconfig context to use (default: the current context)")
	fs.StringVarP(&o.output, "output", "o", outputTable, "output format: table or json")
}

func (o *hubOptions) validate() error {
	if o.output != outputTable && o.output != outputJSON {
		return fmt.Errorf("--output %q: want table or json", o.output)
	}
	return nil
}

// client returns a client of the hub that knows Holdfast's types, loading the kubeconfig the
// way kubectl does.
func (o *hubOptions) client() (client.Client, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the hub's kubeconfig (give --kubeconfig): %w", err)
	}
	cfg.QPS, cfg.Burst = cliQPS, cliBurst
	cfg.UserAgent = "holdfast-cli"
	scheme := runtime.NewScheme()
	if err := holdfastv1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("adding Holdfast types to the scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("building a client of the hub %s: %w", cfg.Host, err)
	}
	return c, nil
}

// writeJSON prints a CLI document, indented, with a final newline.
func writeJSON(w io.Writer, doc any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// fleetFilter narrows the fleet verbs to a cluster, a service set and a service. An empty field
// matches everything.
type fleetFilter struct {
	clusterNamespace string
	cluster          string
	serviceSet       string
	service          string
}

// clusterFlags are --cluster and -n/--namespace, shared by the verbs that can target one cluster.
type clusterFlags struct {
	cluster   string
	namespace string
}

func (c *clusterFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.cluster, "cluster", "", "only this Cluster: NAMESPACE/NAME, or NAME (in any namespace, or the one -n names)")
	fs.StringVarP(&c.namespace, "namespace", "n", "", "only Clusters in this namespace")
}

// resolve splits --cluster into namespace and name, checking it against -n.
func (c *clusterFlags) resolve() (namespace, name string, err error) {
	namespace, name = c.namespace, c.cluster
	if ns, n, ok := strings.Cut(c.cluster, "/"); ok {
		if ns == "" || n == "" || strings.Contains(n, "/") {
			return "", "", fmt.Errorf("--cluster %q: want NAMESPACE/NAME or NAME", c.cluster)
		}
		if c.namespace != "" && c.namespace != ns {
			return "", "", fmt.Errorf("--cluster %q is in namespace %s, but -n says %s", c.cluster, ns, c.namespace)
		}
		namespace, name = ns, n
	}
	return namespace, name, nil
}

func (f fleetFilter) matches(css *holdfastv1.ClusterServiceStatus) bool {
	return (f.clusterNamespace == "" || css.Namespace == f.clusterNamespace) &&
		(f.cluster == "" || css.Spec.Cluster == f.cluster) &&
		(f.serviceSet == "" || css.Spec.MultiClusterService == f.serviceSet)
}

func (f fleetFilter) matchesService(name string) bool { return f.service == "" || name == f.service }

// apply returns the status objects that match, sorted by cluster and service set.
func (f fleetFilter) apply(statuses []holdfastv1.ClusterServiceStatus) []holdfastv1.ClusterServiceStatus {
	var out []holdfastv1.ClusterServiceStatus
	for i := range statuses {
		if f.matches(&statuses[i]) {
			out = append(out, statuses[i])
		}
	}
	sortStatuses(out)
	return out
}

// listOptions narrows the List on the API server: by namespace, and by the labels the
// controller puts on every ClusterServiceStatus. The spec fields stay authoritative (apply).
func (f fleetFilter) listOptions() []client.ListOption {
	var opts []client.ListOption
	if f.clusterNamespace != "" {
		opts = append(opts, client.InNamespace(f.clusterNamespace))
	}
	labels := client.MatchingLabels{}
	if f.cluster != "" {
		labels[holdfastv1.ClusterLabel] = naming.LabelValue(f.cluster)
	}
	if f.serviceSet != "" {
		labels[holdfastv1.MultiClusterServiceLabel] = naming.LabelValue(f.serviceSet)
	}
	if len(labels) > 0 {
		opts = append(opts, labels)
	}
	return opts
}

// listStatuses reads the ClusterServiceStatuses that match f, page by page.
func listStatuses(ctx context.Context, c client.Client, f fleetFilter) ([]holdfastv1.ClusterServiceStatus, error) {
	var out []holdfastv1.ClusterServiceStatus
	cont := ""
	for {
		list := &holdfastv1.ClusterServiceStatusList{}
		opts := append(f.listOptions(), client.Limit(listPageSize), client.Continue(cont))
		if err := c.List(ctx, list, opts...); err != nil {
			return nil, fmt.Errorf("listing ClusterServiceStatuses: %w", err)
		}
		out = append(out, list.Items...)
		if cont = list.Continue; cont == "" {
			return f.apply(out), nil
		}
	}
}

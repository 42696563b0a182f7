package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/fleetview"
)

const (
	outputTable = "table"
	outputJSON  = "json"
	outputYAML  = "yaml"
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
	fs.StringVarP(&o.output, "output", "o", outputTable, "output format: table, json or yaml (the same document as json)")
}

func (o *hubOptions) validate() error {
	if o.output != outputTable && o.output != outputJSON && o.output != outputYAML {
		return fmt.Errorf("--output %q: want table, json or yaml", o.output)
	}
	return nil
}

// structured reports whether --output asks for a document (json or yaml) rather than a table.
func (o *hubOptions) structured() bool { return o.output != outputTable }

// write prints doc as --output asks: json or yaml.
func (o *hubOptions) write(w io.Writer, doc any) error {
	if o.output == outputYAML {
		return fleetview.WriteYAML(w, doc)
	}
	return fleetview.WriteJSON(w, doc)
}

// client returns a client of the hub that knows Holdfast's types, loading the kubeconfig the
// way kubectl does.
func (o *hubOptions) client() (client.Client, error) {
	return fleetview.NewHubClient(o.kubeconfig, o.context)
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

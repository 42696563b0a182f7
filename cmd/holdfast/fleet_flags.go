package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/fleetview"
)

// The formats of --output. table and wide are for people and may change; json and yaml are
// the document scripts depend on; name is one object a line, for pipes.
const (
	outputTable = "table"
	outputWide  = "wide"
	outputJSON  = "json"
	outputYAML  = "yaml"
	outputName  = "name"
)

// outputFormats are the values --output accepts, in the order help and errors list them.
var outputFormats = []string{outputTable, outputWide, outputJSON, outputYAML, outputName}

// hubOptions are the flags every fleet verb has: how to reach the hub and how to print.
type hubOptions struct {
	kubeconfig string
	context    string
	output     string
}

func (o *hubOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the hub (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)")
	fs.StringVar(&o.context, "context", "", "kubeconfig context to use (default: the current context)")
	fs.StringVarP(&o.output, "output", "o", outputTable,
		"output format: "+formatList()+" (wide: more columns, nothing cut; yaml: the json document; name: one object a line)")
}

func (o *hubOptions) validate() error {
	if !slices.Contains(outputFormats, o.output) {
		return fmt.Errorf("--output %q: want %s", o.output, formatList())
	}
	return nil
}

// formatList is "table, wide, json, yaml or name".
func formatList() string {
	n := len(outputFormats)
	return strings.Join(outputFormats[:n-1], ", ") + " or " + outputFormats[n-1]
}

// print writes doc as --output asks: the document as json or yaml, its names, or else the
// table (table, or wide when wide is not nil; a verb without a wide table prints its table).
func (o *hubOptions) print(w io.Writer, doc fleetview.Named, table, wide func(io.Writer) error) error {
	switch o.output {
	case outputJSON:
		return fleetview.WriteJSON(w, doc)
	case outputYAML:
		return fleetview.WriteYAML(w, doc)
	case outputName:
		return fleetview.WriteNames(w, doc)
	case outputWide:
		if wide != nil {
			return wide(w)
		}
	}
	return table(w)
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

package fleetview

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/inventory"
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

// NewHubClient returns a client of the hub that knows Holdfast's types, loading the kubeconfig
// the way kubectl does: kubeconfig and kubeContext are --kubeconfig and --context, each empty
// for kubectl's default.
func NewHubClient(kubeconfig, kubeContext string) (client.Client, error) {
	cfg, err := HubConfig(kubeconfig, kubeContext)
	if err != nil {
		return nil, err
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

// HubConfig loads the hub's REST config the way kubectl does: kubeconfig and kubeContext are
// --kubeconfig and --context, each empty for kubectl's default.
func HubConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the hub's kubeconfig (give --kubeconfig): %w", err)
	}
	return cfg, nil
}

// Filter narrows the fleet verbs to a cluster, a service set and a service. An empty field
// matches everything.
type Filter struct {
	ClusterNamespace string
	Cluster          string
	ServiceSet       string
	Service          string
}

func (f Filter) matches(css *holdfastv1.ClusterServiceStatus) bool {
	return (f.ClusterNamespace == "" || css.Namespace == f.ClusterNamespace) &&
		(f.Cluster == "" || css.Spec.Cluster == f.Cluster) &&
		(f.ServiceSet == "" || css.Spec.MultiClusterService == f.ServiceSet)
}

func (f Filter) matchesService(name string) bool { return f.Service == "" || name == f.Service }

// apply returns the status objects that match, sorted by cluster and service set.
func (f Filter) apply(statuses []holdfastv1.ClusterServiceStatus) []holdfastv1.ClusterServiceStatus {
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
func (f Filter) listOptions() []client.ListOption {
	var opts []client.ListOption
	if f.ClusterNamespace != "" {
		opts = append(opts, client.InNamespace(f.ClusterNamespace))
	}
	labels := client.MatchingLabels{}
	if f.Cluster != "" {
		labels[holdfastv1.ClusterLabel] = naming.LabelValue(f.Cluster)
	}
	if f.ServiceSet != "" {
		labels[holdfastv1.MultiClusterServiceLabel] = naming.LabelValue(f.ServiceSet)
	}
	if len(labels) > 0 {
		opts = append(opts, labels)
	}
	return opts
}

// loadInventory puts the whole inventory of a status object that keeps it in shards (package
// inventory) into its status.resources, so that the read model sees every object whatever its
// number. A status object whose shards are incomplete keeps the summary it holds (the entries
// not InSync): its Applied condition says what is missing.
func loadInventory(ctx context.Context, c client.Reader, css *holdfastv1.ClusterServiceStatus) error {
	if css.Status.Inventory == nil {
		return nil
	}
	entries, _, err := inventory.Store{Reader: c}.Load(ctx, css)
	var incomplete *inventory.IncompleteError
	switch {
	case errors.As(err, &incomplete):
		return nil
	case err != nil:
		return err
	}
	css.Status.Resources = entries
	return nil
}

// loadInventories loads the whole inventory of each status object (loadInventory).
func loadInventories(ctx context.Context, c client.Reader, items []holdfastv1.ClusterServiceStatus) error {
	for i := range items {
		if err := loadInventory(ctx, c, &items[i]); err != nil {
			return err
		}
	}
	return nil
}

// ListStatuses reads the ClusterServiceStatuses that match f, page by page, each with its whole
// inventory.
func ListStatuses(ctx context.Context, c client.Client, f Filter) ([]holdfastv1.ClusterServiceStatus, error) {
	var out []holdfastv1.ClusterServiceStatus
	cont := ""
	for {
		list := &holdfastv1.ClusterServiceStatusList{}
		opts := append(f.listOptions(), client.Limit(listPageSize), client.Continue(cont))
		if err := c.List(ctx, list, opts...); err != nil {
			return nil, fmt.Errorf("listing ClusterServiceStatuses: %w", err)
		}
		if err := loadInventories(ctx, c, list.Items); err != nil {
			return nil, err
		}
		out = append(out, list.Items...)
		if cont = list.Continue; cont == "" {
			return f.apply(out), nil
		}
	}
}

// ReadStatuses is ListStatuses for a reader that holds every status object in memory (an
// informer cache, which pages nothing): one List, narrowed by f; the inventories kept in
// shards are read with shards, straight from the API server. The objects are the reader's
// copies, so the read model's documents are built from them as from ListStatuses'.
func ReadStatuses(ctx context.Context, r, shards client.Reader, f Filter) ([]holdfastv1.ClusterServiceStatus, error) {
	list := &holdfastv1.ClusterServiceStatusList{}
	if err := r.List(ctx, list, f.listOptions()...); err != nil {
		return nil, fmt.Errorf("listing ClusterServiceStatuses: %w", err)
	}
	if err := loadInventories(ctx, shards, list.Items); err != nil {
		return nil, err
	}
	return f.apply(list.Items), nil
}

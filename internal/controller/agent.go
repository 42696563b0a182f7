package controller

import (
	"context"
	"fmt"
	"net/http"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller/clusterservicestatus"
	"holdfast.dev/holdfast/internal/controller/index"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/tenancy"
)

// AgentOptions configure the manager of a Pull cluster's agent (NewAgentManager).
type AgentOptions struct {
	// Cluster is the agent's Cluster on the hub: its status objects are the only ones it
	// reconciles, and its namespace the only one it reads.
	Cluster types.NamespacedName
	// Own reaches the agent's own cluster, the one it applies to.
	Own *rest.Config
	// Works gives the works the hub published (package agent).
	Works clusterservicestatus.Works
	// Unrecorded keeps the drift records waiting for the hub past a restart, and Statuses the
	// status objects as read whole (package agent).
	Unrecorded clusterservicestatus.UnrecordedStore
	Statuses   clusterservicestatus.StatusStore
	// Options are the controller's, of which the agent uses those of the per-cluster
	// reconcile (targets, concurrency, timeouts, break-glass, inventory shards, the clock).
	Options Options
}

// NewAgentManager returns the manager of a Pull cluster's agent on the hub config hub (the
// agent's own credentials): the status controller of the hub (package clusterservicestatus),
// fed by the agent's works instead of the hub's service sets, with a cache of the status
// objects of its Cluster's namespace only, and a fleet registry holding one connection, to its
// own cluster. No metrics or health server, no leader election: one agent runs per cluster.
func NewAgentManager(ctx context.Context, hub *rest.Config, o AgentOptions) (ctrl.Manager, *fleet.Connection, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, nil, err
	}
	opts := o.Options.withDefaults()
	mgr, err := ctrl.NewManager(hub, ctrl.Options{
		Scheme:                 scheme,
		MapperProvider:         HubMapper,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{o.Cluster.Namespace: {}},
			// Whole status objects, the agent's few (WholeCache): a status patch needs no read
			// of the hub first.
			DefaultTransform: cache.TransformStripManagedFields(),
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("creating the agent's manager: %w", err)
	}
	applied := drift.NewApplied()
	registry := newRegistry(scheme, opts, tenancy.Policy{}, applied)
	if err := mgr.Add(registry); err != nil {
		return nil, nil, fmt.Errorf("adding the agent's connection: %w", err)
	}
	conn, err := registry.ConnectConfig(o.Cluster, "agent", o.Own)
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to the agent's own cluster: %w", err)
	}
	if err := index.SetupStatuses(ctx, mgr); err != nil {
		return nil, nil, err
	}
	ctrlOpts := controller.Options{MaxConcurrentReconciles: opts.Concurrency, ReconciliationTimeout: max(opts.ReconcileTimeout, 0)}
	if opts.SkipNameValidation {
		ctrlOpts.SkipNameValidation = ptr.To(true)
	}
	if err := (&clusterservicestatus.Reconciler{
		Works:      o.Works,
		Unrecorded: o.Unrecorded,
		Client:     mgr.GetClient(),
		APIReader:  mgr.GetAPIReader(),
		WholeCache: true,
		Statuses:   o.Statuses,
		Fleet:      registry,
		Recorder:   eventRecorder(mgr, "holdfast-agent"),
		Clock:      opts.Clock,
		Applied:    applied,

		BreakGlass:         opts.BreakGlass,
		InventoryShardSize: opts.InventoryShardSize,
	}).SetupAgentWithManager(mgr, ctrlOpts); err != nil {
		return nil, nil, fmt.Errorf("setting up the agent's ClusterServiceStatus controller: %w", err)
	}
	return mgr, conn, nil
}

// agentHubKinds are the kinds an agent reads or writes on the hub, all in its Cluster's
// namespace.
var agentHubKinds = []schema.GroupVersionKind{
	holdfastv1.GroupVersion.WithKind("ClusterServiceStatus"),
	holdfastv1.GroupVersion.WithKind("ClusterServiceInventory"),
	corev1.SchemeGroupVersion.WithKind("Secret"),
	corev1.SchemeGroupVersion.WithKind("Event"),
	eventsv1.SchemeGroupVersion.WithKind("Event"),
	coordinationv1.SchemeGroupVersion.WithKind("Lease"),
}

// HubMapper is the REST mapper of an agent's hub clients: the kinds it uses are known without
// discovery, so that an agent started while the hub is away (answering from what it kept, see
// package agent) needs none, and a thousand agents do not each read the hub's discovery; any
// other kind is found by discovery.
func HubMapper(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	known := meta.NewDefaultRESTMapper(nil)
	for _, gvk := range agentHubKinds {
		known.Add(gvk, meta.RESTScopeNamespace)
	}
	discovered, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building the agent's REST mapper of the hub: %w", err)
	}
	return meta.FirstHitRESTMapper{MultiRESTMapper: meta.MultiRESTMapper{known, discovered}}, nil
}

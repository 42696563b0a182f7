package controller

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/alerting"
	"holdfast.dev/holdfast/internal/controller/alertrule"
	clustercontroller "holdfast.dev/holdfast/internal/controller/cluster"
	"holdfast.dev/holdfast/internal/controller/clusterapi"
	"holdfast.dev/holdfast/internal/controller/clusterservicestatus"
	"holdfast.dev/holdfast/internal/controller/index"
	"holdfast.dev/holdfast/internal/controller/multiclusterservice"
	"holdfast.dev/holdfast/internal/controller/serviceset"
	"holdfast.dev/holdfast/internal/controller/servicetemplate"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/netpolicy"
	"holdfast.dev/holdfast/internal/notify"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/render/chartsource"
	"holdfast.dev/holdfast/internal/sharding"
	"holdfast.dev/holdfast/internal/templatesource"
	"holdfast.dev/holdfast/internal/tenancy"
)

// DefaultReconcileTimeout bounds one Reconcile call: far above what a healthy reconcile takes
// (each request to a target is bounded by fleet.DefaultRequestTimeout, each render by
// render.DefaultTimeout), so that it only frees a worker something held.
const DefaultReconcileTimeout = 10 * time.Minute

// Options configure the manager.
type Options struct {
	// MetricsAddr serves Prometheus metrics; "0" turns them off.
	MetricsAddr string
	// MetricsSecure serves the metrics over HTTPS to clients whose Kubernetes token may GET
	// /metrics (see metricsServerOptions); otherwise they are plain HTTP, open to anyone who
	// reaches the port. `holdfast controller` turns it on; in-process tests and benchmarks leave
	// it off, or the metrics off altogether.
	MetricsSecure bool
	// MetricsCertDir holds the metrics endpoint's certificate and key, tls.crt and tls.key (a
	// mounted kubernetes.io/tls Secret, e.g. cert-manager's), reloaded when they change; empty
	// means a self-signed certificate made at start. It needs MetricsSecure.
	MetricsCertDir string
	// HealthAddr serves /healthz and /readyz; "0" turns them off.
	HealthAddr string
	// LeaderElection makes replicas elect one active manager.
	LeaderElection          bool
	LeaderElectionNamespace string
	LeaderElectionID        string
	// Concurrency is the number of Clusters reconciled at once.
	Concurrency int
	// InventoryShardSize is how many inventory entries a ClusterServiceStatus holds itself, and
	// about how many each ClusterServiceInventory shard holds beyond (package inventory);
	// inventory.DefaultShardSize when 0.
	InventoryShardSize int
	// DriftMetricsMaxUsers is how many distinct users holdfast_drifts_by_user_total names in
	// this process before it counts further ones as other; metrics.DefaultMaxDriftUsers when 0.
	DriftMetricsMaxUsers int
	// ReconcileTimeout bounds each Reconcile call of every controller, so that a target that
	// hangs or a render that runs long holds a worker no longer than that; DefaultReconcileTimeout
	// when 0, none when negative.
	ReconcileTimeout time.Duration
	// ProbeInterval, ProbeRetryInterval, ConnectionGrace and StatusHeartbeat tune Cluster
	// health probing.
	ProbeInterval      time.Duration
	ProbeRetryInterval time.Duration
	ConnectionGrace    time.Duration
	StatusHeartbeat    time.Duration
	// Version is the version Pull clusters' agents are judged against (agentaccess.Support):
	// the binary's when empty; tests set one.
	Version string
	// Clock is injectable for tests.
	Clock clock.PassiveClock
	// HubQPS and HubBurst, when HubQPS is above 0, limit the requests to the hub whatever its
	// config says (HubBurst 2×HubQPS when 0); else the config's limit applies, and when it sets
	// none, there is none (hubLimit).
	HubQPS   float32
	HubBurst int
	// TargetQPS and TargetBurst limit the requests to each target cluster; fleet defaults when 0.
	TargetQPS   float32
	TargetBurst int
	// TargetReadIdleTimeout, TargetPingTimeout and TargetRequestTimeout tune how soon a dead
	// connection to a target cluster is noticed; fleet defaults when 0 (see fleet.Options).
	TargetReadIdleTimeout time.Duration
	TargetPingTimeout     time.Duration
	TargetRequestTimeout  time.Duration
	// ClusterAPIDiscovery makes every initialized Cluster API cluster on the hub a target (see
	// package clusterapi); it needs the hub to serve Cluster API when the manager is built.
	ClusterAPIDiscovery bool
	// AllowedExecPlugins are the exec credential plugins Clusters' kubeconfigs may use (see
	// fleet.KubeconfigPolicy); none when empty. They run as the controller's own identity, so
	// only for Clusters of platform namespaces and of ExecPluginNamespaces
	// (tenancy.Policy.AmbientCredentials).
	AllowedExecPlugins []string
	// ExecPluginNamespaces are namespaces, beside the platform ones, whose Clusters may use the
	// AllowedExecPlugins.
	ExecPluginNamespaces []string
	// TargetTransport, if set, wraps the HTTP transport of every target cluster's clients
	// (benchmarks count requests with it).
	TargetTransport func(cluster types.NamespacedName, rt http.RoundTripper) http.RoundTripper
	// TargetDial, if set, wraps the function that opens the TCP connections to every target
	// cluster (tests cut links with it; see fleet.Options.WrapDial).
	TargetDial func(cluster types.NamespacedName, dial fleet.DialFunc) fleet.DialFunc
	// OnTargetWatch, if set, is called for every watch request sent to a target cluster (see
	// fleet.Options.OnWatch).
	OnTargetWatch func(cluster types.NamespacedName, resource string)
	// Charts fetches Helm charts; defaults to a cached HTTP repository and OCI registry client
	// under the egress policy below.
	Charts render.ChartSource
	// Artifacts resolves and downloads ServiceTemplates' artifact sources; defaults to Charts
	// when that fetches artifacts too, as the default does.
	Artifacts templatesource.Artifacts
	// EgressDenyPrivate and EgressAllowedHosts are the egress policy of the connections made
	// for what users declare: Helm repositories, OCI registries and notification webhooks (see
	// package netpolicy). Link-local and cloud metadata addresses are always refused;
	// EgressDenyPrivate refuses loopback and private addresses too; EgressAllowedHosts (host
	// names, *.domains, IP addresses, CIDRs) are allowed whatever the rules say.
	EgressDenyPrivate  bool
	EgressAllowedHosts []string
	// PlatformNamespaces are where platform service sets select Clusters and read templates and
	// Secrets (see package tenancy): the controller's own namespace when empty (the pod's, or
	// LocalNamespace outside a cluster); tenancy.AllNamespaces alone for every namespace.
	PlatformNamespaces []string
	// TenantServiceAccount is the ServiceAccount ServiceSets act as on their targets by default
	// (see tenancy.Policy).
	TenantServiceAccount string
	// BreakGlass are users and groups on the targets every service set's drift.prevention lets
	// through (clusterservicestatus.Reconciler.BreakGlass).
	BreakGlass holdfastv1.BreakGlass
	// ForbidInsecureSkipTLSVerify refuses every Helm source that sets insecureSkipTLSVerify
	// (reason InsecureSkipTLSVerifyForbidden). It is meant to cover Clusters' kubeconfigs
	// with insecure-skip-tls-verify as well, once package fleet reads it.
	ForbidInsecureSkipTLSVerify bool
	// SkipNameValidation allows several managers in one process (tests).
	SkipNameValidation bool
	// Shard divides the clusters among the replicas that run with it (package sharding): the
	// Cluster and ClusterServiceStatus controllers run on every replica, each on its share; the
	// others stay on the elected leader. It needs LeaderElection; the member Leases live in
	// LeaderElectionNamespace.
	Shard bool
	// ShardID names this replica among the others (its pod name); the host name when empty.
	ShardID string
	// ShardLeaseDuration is how long a replica that stopped renewing keeps its clusters;
	// sharding.DefaultLeaseDuration when 0.
	ShardLeaseDuration time.Duration
	// ShardKeepLeaseOnStop leaves the member Lease to expire when the manager stops, as a killed
	// replica does (tests), instead of handing the clusters over at once.
	ShardKeepLeaseOnStop bool
}

// Scheme knows Holdfast's types and Kubernetes' built-in ones.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("adding Kubernetes types to the scheme: %w", err)
	}
	if err := holdfastv1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("adding Holdfast types to the scheme: %w", err)
	}
	return s, nil
}

// The leader election Lease lives in the controller's own namespace (holdfast-system, or the Helm
// release's namespace: the chart grants this rule there), as do the Events about it and, with
// --shard, each replica's member Lease (package sharding lists and deletes expired ones).
//
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete,namespace=holdfast-system
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch,namespace=holdfast-system

// The secure metrics endpoint asks the hub who a scraper's token belongs to (TokenReview) and
// whether it may GET /metrics (SubjectAccessReview).
//
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// metricsServerOptions serve the metrics as opts say. Secure, they are HTTPS behind
// controller-runtime's authentication and authorization filter, as kubebuilder's scaffold does:
// a request without a token is refused with 401, one with a token the hub rejects with 500
// (the filter's answer when the TokenReview says why), one whose token may not GET /metrics (the
// chart's holdfast-metrics-reader ClusterRole grants that) with 403. The certificate is
// the one in MetricsCertDir, watched for renewals, or a self-signed one; the returned watcher,
// when not nil, must run with the manager.
func metricsServerOptions(opts Options) (metricsserver.Options, *certwatcher.CertWatcher, error) {
	o := metricsserver.Options{BindAddress: opts.MetricsAddr}
	if !opts.MetricsSecure {
		if opts.MetricsCertDir != "" {
			return o, nil, fmt.Errorf("--metrics-cert-dir needs --metrics-secure: plain HTTP metrics use no certificate")
		}
		return o, nil, nil
	}
	o.SecureServing = true
	o.FilterProvider = filters.WithAuthenticationAndAuthorization
	// HTTP/1.1 only, as kubebuilder's scaffold does: Prometheus needs nothing more, and it keeps
	// the endpoint out of reach of HTTP/2's stream reset and cancellation attacks.
	o.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	if opts.MetricsCertDir == "" || opts.MetricsAddr == "0" {
		return o, nil, nil
	}
	// controller-runtime would fall back to a self-signed certificate when the files are
	// missing; a certificate that was asked for and is absent is an error instead.
	certs, err := certwatcher.New(filepath.Join(opts.MetricsCertDir, "tls.crt"), filepath.Join(opts.MetricsCertDir, "tls.key"))
	if err != nil {
		return o, nil, fmt.Errorf("loading the metrics certificate from --metrics-cert-dir %s: %w", opts.MetricsCertDir, err)
	}
	o.TLSOpts = append(o.TLSOpts, func(c *tls.Config) { c.GetCertificate = certs.GetCertificate })
	return o, certs, nil
}

// HubLimit is hub with the client-side rate limit of opts: HubQPS when above 0 (--hub-qps
// given), else the config's own when it sets one (a kubeconfig's QPS), else none, as
// controller-runtime's config loader leaves it (ctrl.GetConfig, in-cluster too): the hub API
// server's priority and fairness queue what it cannot serve, and the workers (--concurrency)
// bound how many requests are in flight. A limit here is one per resource kind (client-go
// gives each REST client its own token bucket), and a limit of client-go's default (5/s) or
// the old 50/s would make the hub's part of a fleet-wide change of a thousand Pull clusters,
// four requests each, wait for it (bench/RESULTS.md#agents). A Pull cluster's agent uses it too:
// client-go's default held a burst of drift corrections' status patches at five a second, and
// the corrections that came next waited for them (bench/RESULTS.md#pull).
func HubLimit(hub *rest.Config, opts Options) *rest.Config {
	switch {
	case opts.HubQPS > 0:
		hub = rest.CopyConfig(hub)
		hub.QPS, hub.Burst, hub.RateLimiter = opts.HubQPS, cmp.Or(opts.HubBurst, int(2*opts.HubQPS)), nil
	case hub.QPS == 0 && hub.RateLimiter == nil:
		hub = rest.CopyConfig(hub)
		hub.QPS = -1
	}
	return hub
}

// NewManager builds the manager with every reconciler registered, and the fleet registry it
// shares with them.
func NewManager(ctx context.Context, hub *rest.Config, opts Options) (ctrl.Manager, *fleet.Registry, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, nil, err
	}
	hub = HubLimit(hub, opts)
	if opts.DriftMetricsMaxUsers < 0 {
		return nil, nil, fmt.Errorf("--drift-metrics-max-users must not be negative, got %d", opts.DriftMetricsMaxUsers)
	}
	metrics.SetMaxDriftUsers(opts.DriftMetricsMaxUsers)
	opts = opts.withDefaults()
	egress, err := netpolicy.New(netpolicy.Options{DenyPrivate: opts.EgressDenyPrivate, AllowedHosts: opts.EgressAllowedHosts})
	if err != nil {
		return nil, nil, fmt.Errorf("--egress-allowed-hosts: %w", err)
	}
	own := ownNamespace()
	platform, err := tenancy.PlatformNamespaces(opts.PlatformNamespaces, own)
	if err != nil {
		return nil, nil, err
	}
	mgr, err := newHubManager(hub, scheme, opts)
	if err != nil {
		return nil, nil, err
	}
	w := wiring{
		tenants: tenancy.Policy{PlatformNamespaces: platform, TenantServiceAccount: opts.TenantServiceAccount},
		// What Holdfast applied to each target: the target caches keep only those objects in full.
		applied: drift.NewApplied(),
		egress:  egress,
		own:     own,
	}
	w.registry = newRegistry(scheme, opts, w.tenants, w.applied)
	if err := mgr.Add(runnable(w.registry, opts.Shard)); err != nil {
		return nil, nil, fmt.Errorf("adding the fleet registry: %w", err)
	}
	if err := setupControllers(ctx, mgr, opts, w); err != nil {
		return nil, nil, err
	}
	return mgr, w.registry, nil
}

// wiring is what NewManager hands the controllers it sets up.
type wiring struct {
	registry *fleet.Registry
	tenants  tenancy.Policy
	applied  *drift.Applied
	egress   *netpolicy.Policy
	// own is the namespace the controller runs in.
	own string
}

// withDefaults fills in what opts leaves unset.
func (opts Options) withDefaults() Options {
	if opts.LeaderElectionID == "" {
		opts.LeaderElectionID = "holdfast.dev"
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 10
	}
	if opts.ReconcileTimeout == 0 {
		opts.ReconcileTimeout = DefaultReconcileTimeout
	}
	return opts
}

// newHubManager is the manager of the hub's controllers, with its metrics server and health
// checks.
func newHubManager(hub *rest.Config, scheme *runtime.Scheme, opts Options) (ctrl.Manager, error) {
	metricsOpts, certs, err := metricsServerOptions(opts)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(hub, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsOpts,
		HealthProbeBindAddress:        opts.HealthAddr,
		LeaderElection:                opts.LeaderElection,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionID:              opts.LeaderElectionID,
		LeaderElectionReleaseOnCancel: true,
		Cache: cache.Options{
			DefaultTransform: cache.TransformStripManagedFields(),
			// Status objects are cached without their per-object lists, ConfigMaps and Secrets
			// without data or annotations (see hubCacheByObject).
			ByObject: hubCacheByObject(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if certs != nil {
		if err := mgr.Add(certs); err != nil {
			return nil, fmt.Errorf("adding the metrics certificate watcher: %w", err)
		}
	}
	if opts.HealthAddr != "0" && opts.HealthAddr != "" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return nil, fmt.Errorf("adding the health check: %w", err)
		}
		if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
			return nil, fmt.Errorf("adding the ready check: %w", err)
		}
	}
	return mgr, nil
}

// newRegistry is the fleet's connections: one per Cluster, with target caches that keep what
// the drift watches need.
func newRegistry(scheme *runtime.Scheme, opts Options, tenants tenancy.Policy, applied *drift.Applied) *fleet.Registry {
	return fleet.NewRegistry(fleet.Options{
		Scheme:        scheme,
		CacheSelector: labels.SelectorFromSet(labels.Set{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue}),
		WrapTransport: opts.TargetTransport,
		WrapDial:      opts.TargetDial,
		// The target caches serve only the drift watches: they keep a compact snapshot of each
		// managed object rather than the object, and a stub of other labelled ones (see package
		// drift).
		CacheTransform: applied.Transform,
		OnWatch: func(cluster types.NamespacedName, resource string) {
			metrics.WatchStarted(cluster.String(), resource)
			if opts.OnTargetWatch != nil {
				opts.OnTargetWatch(cluster, resource)
			}
		},
		QPS:             opts.TargetQPS,
		Burst:           opts.TargetBurst,
		ReadIdleTimeout: opts.TargetReadIdleTimeout,
		PingTimeout:     opts.TargetPingTimeout,
		RequestTimeout:  opts.TargetRequestTimeout,
		Clock:           opts.Clock,
		Kubeconfigs: fleet.KubeconfigPolicy{AllowedExecPlugins: opts.AllowedExecPlugins,
			AmbientCredentials:          func(ns string) bool { return tenants.AmbientCredentials(ns, opts.ExecPluginNamespaces) },
			ForbidInsecureSkipTLSVerify: opts.ForbidInsecureSkipTLSVerify},
	})
}

// setupControllers sets up the controllers: the per-cluster ones (Clusters, status objects) on
// the leader, or on every replica for its share when sharded, the others on the leader.
func setupControllers(ctx context.Context, mgr ctrl.Manager, opts Options, w wiring) error {
	ctrlOpts := controller.Options{MaxConcurrentReconciles: opts.Concurrency, ReconciliationTimeout: max(opts.ReconcileTimeout, 0)}
	if opts.SkipNameValidation {
		ctrlOpts.SkipNameValidation = ptr.To(true)
	}
	perCluster := ctrlOpts
	var shard *sharding.Coordinator
	if opts.Shard {
		var err error
		if shard, err = newShard(mgr, w.registry, opts); err != nil {
			return err
		}
		perCluster.NeedLeaderElection = ptr.To(false)
	}
	if err := (&clustercontroller.Reconciler{
		Client:             mgr.GetClient(),
		APIReader:          mgr.GetAPIReader(),
		Fleet:              w.registry,
		Recorder:           eventRecorder(mgr, "holdfast-cluster"),
		Clock:              opts.Clock,
		ProbeInterval:      opts.ProbeInterval,
		ProbeRetryInterval: opts.ProbeRetryInterval,
		ConnectionGrace:    opts.ConnectionGrace,
		StatusHeartbeat:    opts.StatusHeartbeat,
		Version:            opts.Version,
		Shard:              shard,
	}).SetupWithManager(ctx, mgr, perCluster); err != nil {
		return fmt.Errorf("setting up the Cluster controller: %w", err)
	}

	if opts.ClusterAPIDiscovery {
		gvk, ok := clusterapi.ServedKind(mgr.GetRESTMapper())
		if !ok {
			return fmt.Errorf("--cluster-api-discovery: the hub serves no %s Cluster kind; install Cluster API first", clusterapi.Group)
		}
		if err := (&clusterapi.Reconciler{Client: mgr.GetClient(), GVK: gvk}).SetupWithManager(mgr, ctrlOpts); err != nil {
			return fmt.Errorf("setting up Cluster API discovery: %w", err)
		}
	}
	return setupServiceControllers(ctx, mgr, opts, w, ctrlOpts, perCluster, shard)
}

// setupServiceControllers sets up the controllers of service sets, their templates and their
// status objects, and the notification dispatcher they share.
func setupServiceControllers(ctx context.Context, mgr ctrl.Manager, opts Options, w wiring, ctrlOpts, perCluster controller.Options, shard *sharding.Coordinator) error {
	if err := index.Setup(ctx, mgr); err != nil {
		return err
	}
	notifier := notify.New(notify.Options{Egress: w.egress})
	if err := mgr.Add(runnable(notifier, opts.Shard)); err != nil {
		return fmt.Errorf("adding the notification dispatcher: %w", err)
	}
	// AlertRules are read from the cache; their Secrets from the API server, never cached.
	alerts := &alerting.Router{Rules: mgr.GetClient(), Secrets: mgr.GetAPIReader(), Notifier: notifier, Tenancy: w.tenants, Clock: opts.Clock}
	if err := (&alertrule.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}).SetupWithManager(mgr, ctrlOpts); err != nil {
		return fmt.Errorf("setting up the AlertRule controller: %w", err)
	}
	if err := (&multiclusterservice.Reconciler{
		Alerts:   alerts,
		Client:   mgr.GetClient(),
		Recorder: eventRecorder(mgr, "holdfast-multiclusterservice"),
		Tenancy:  w.tenants,
		Clock:    opts.Clock,
		Notifier: notifier,
		// Secrets (notification targets) are read from the API server, never cached.
		APIReader: mgr.GetAPIReader(),
	}).SetupWithManager(mgr, ctrlOpts); err != nil {
		return fmt.Errorf("setting up the MultiClusterService controller: %w", err)
	}
	if err := (&serviceset.Reconciler{
		Client:   mgr.GetClient(),
		Recorder: eventRecorder(mgr, "holdfast-serviceset"),
		Tenancy:  w.tenants,
	}).SetupWithManager(mgr, ctrlOpts); err != nil {
		return fmt.Errorf("setting up the ServiceSet controller: %w", err)
	}
	if opts.Charts == nil {
		opts.Charts = chartsource.New(chartsource.Options{Egress: w.egress, ForbidInsecureSkipTLSVerify: opts.ForbidInsecureSkipTLSVerify})
	}
	if a, ok := opts.Charts.(templatesource.Artifacts); ok && opts.Artifacts == nil {
		opts.Artifacts = a
	}
	if err := (&servicetemplate.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Charts: opts.Charts, Artifacts: opts.Artifacts,
	}).SetupWithManager(mgr, ctrlOpts); err != nil {
		return fmt.Errorf("setting up the ServiceTemplate controller: %w", err)
	}
	if err := (&clusterservicestatus.Reconciler{
		Notifier:  notifier,
		Alerts:    alerts,
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Fleet:     w.registry,
		Charts:    opts.Charts,
		Artifacts: opts.Artifacts,
		Recorder:  eventRecorder(mgr, "holdfast-deploy"),
		Clock:     opts.Clock,
		Tenancy:   w.tenants,
		Shard:     shard,
		Applied:   w.applied,

		BreakGlass:          opts.BreakGlass,
		InventoryShardSize:  opts.InventoryShardSize,
		RenderingsNamespace: w.own,
	}).SetupWithManager(mgr, perCluster); err != nil {
		return fmt.Errorf("setting up the ClusterServiceStatus controller: %w", err)
	}
	return nil
}

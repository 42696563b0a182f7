package main

import (
	"fmt"
	"log/slog"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/go-logr/logr"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	"holdfast.dev/holdfast/internal/controller"
	clustercontroller "holdfast.dev/holdfast/internal/controller/cluster"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/inventory"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/sharding"
)

type controllerOptions struct {
	kubeconfig string
	manager    controller.Options
}

func (o *controllerOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the hub cluster; empty means in-cluster, then $KUBECONFIG")
	fs.StringVar(&o.manager.MetricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint; 0 turns it off")
	fs.BoolVar(&o.manager.MetricsSecure, "metrics-secure", true, "serve the metrics over HTTPS to clients whose Kubernetes token may GET /metrics; false serves plain HTTP to anyone, for local development only")
	fs.StringVar(&o.manager.MetricsCertDir, "metrics-cert-dir", "", "directory with the metrics endpoint's tls.crt and tls.key (e.g. a mounted cert-manager Secret), reloaded when they change; empty means a self-signed certificate")
	fs.StringVar(&o.manager.HealthAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz; 0 turns them off")
	fs.BoolVar(&o.manager.LeaderElection, "leader-elect", false, "elect one active replica through a Lease on the hub")
	fs.StringVar(&o.manager.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election Lease (default: the controller's own)")
	fs.StringVar(&o.manager.LeaderElectionID, "leader-election-id", "holdfast.dev", "name of the leader election Lease")
	fs.BoolVar(&o.manager.Shard, "shard", false, "divide the clusters among the replicas that run with --shard, each handling (probing, deploying to, correcting) its share, handed over when a replica stops or joins; needs --leader-elect, whose leader keeps creating and deleting the per-cluster status objects")
	fs.StringVar(&o.manager.ShardID, "shard-id", "", "this replica's name among the sharded replicas, unique to it (default: the host name, a pod's name)")
	fs.DurationVar(&o.manager.ShardLeaseDuration, "shard-lease-duration", sharding.DefaultLeaseDuration, "how long a sharded replica that stopped renewing its Lease keeps its clusters before the others take them over")
	fs.IntVar(&o.manager.Concurrency, "concurrency", 10, "objects of each kind (Clusters, service sets, per-cluster deployments) reconciled at once")
	fs.IntVar(&o.manager.InventoryShardSize, "inventory-shard-size", inventory.DefaultShardSize, "inventory entries a ClusterServiceStatus holds itself; a larger inventory is kept in ClusterServiceInventory shards of about as many entries each (docs/inventory.md)")
	fs.IntVar(&o.manager.DriftMetricsMaxUsers, "drift-metrics-max-users", metrics.DefaultMaxDriftUsers, "distinct users holdfast_drifts_by_user_total names before it counts further ones as other (a bound on its series: service sets × (this + 2))")
	fs.DurationVar(&o.manager.ReconcileTimeout, "reconcile-timeout", controller.DefaultReconcileTimeout, "longest time one reconcile may take (a hanging target or render holds a worker no longer); it is then retried with backoff")
	addHubLimitFlags(fs, &o.manager)
	fs.Float32Var(&o.manager.TargetQPS, "target-qps", fleet.DefaultQPS, "requests per second Holdfast may send to each target cluster")
	fs.IntVar(&o.manager.TargetBurst, "target-burst", fleet.DefaultBurst, "burst of requests Holdfast may send to each target cluster")
	fs.DurationVar(&o.manager.TargetReadIdleTimeout, "target-read-idle-timeout", fleet.DefaultReadIdleTimeout, "how long a connection to a target cluster may receive nothing before it is pinged; negative turns the health check off")
	fs.DurationVar(&o.manager.TargetPingTimeout, "target-ping-timeout", fleet.DefaultPingTimeout, "how long a ping may go unanswered before the connection to a target cluster is closed and opened again")
	fs.DurationVar(&o.manager.TargetRequestTimeout, "target-request-timeout", fleet.DefaultRequestTimeout, "longest time a request to a target cluster may take, watches excepted; negative means none")
	fs.BoolVar(&o.manager.ClusterAPIDiscovery, "cluster-api-discovery", false, "make every initialized Cluster API (cluster.x-k8s.io) cluster on the hub a target, with its labels and the kubeconfig Secret Cluster API writes")
	fs.StringSliceVar(&o.manager.AllowedExecPlugins, "allowed-exec-plugins", nil, "exec credential plugins (command names on the controller's PATH, comma-separated, e.g. gke-gcloud-auth-plugin) Clusters' kubeconfigs may use, in platform namespaces and --exec-plugin-namespaces only (they run as the controller's identity); none by default")
	fs.StringSliceVar(&o.manager.ExecPluginNamespaces, "exec-plugin-namespaces", nil, "namespaces, beside the platform namespaces, whose Clusters may use the --allowed-exec-plugins, i.e. the controller's own cloud identity (comma-separated; none by default)")
	fs.BoolVar(&o.manager.EgressDenyPrivate, "egress-deny-private", false, "refuse connections to loopback and private addresses (127.0.0.0/8, 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, ::1, fc00::/7) for Helm repositories, OCI registries and webhooks; link-local and cloud metadata addresses are always refused")
	fs.StringSliceVar(&o.manager.PlatformNamespaces, "platform-namespaces", nil, "platform namespaces: MultiClusterServices select Clusters only in these namespaces (and in namespaces they list themselves) and use templates and Secrets only from them, while each other namespace is a tenant's, deploying with ServiceSets to its own Clusters (comma-separated; a name ending in '*' matches by prefix; default: the controller's own namespace, from POD_NAMESPACE, else holdfast-system, and holdfast-pull-*, the Pull clusters' namespaces; '*': every namespace, a hub with one team)")
	fs.StringVar(&o.manager.TenantServiceAccount, "tenant-service-account", "", "ServiceSets act on their targets as this ServiceAccount, in a namespace named as the ServiceSet's, unless they name one of that namespace themselves (empty: as the Cluster's kubeconfig)")
	fs.StringSliceVar(&o.manager.BreakGlass.Users, "prevention-break-glass-users", nil, "user names on the target clusters that every service set's drift.prevention lets change managed objects, beside the set's own breakGlass (comma-separated)")
	fs.StringSliceVar(&o.manager.BreakGlass.Groups, "prevention-break-glass-groups", nil, "groups on the target clusters that every service set's drift.prevention lets change managed objects, beside the set's own breakGlass, e.g. system:masters or the platform's on-call (comma-separated)")
	fs.StringSliceVar(&o.manager.EgressAllowedHosts, "egress-allowed-hosts", nil, "hosts Helm repositories, OCI registries and webhooks may be reached on whatever the egress rules say (comma-separated host names, *.domains, IP addresses or CIDRs, e.g. charts.internal.example.com,10.20.0.0/16)")
	fs.BoolVar(&o.manager.ForbidInsecureSkipTLSVerify, "forbid-insecure-skip-tls-verify", false, "refuse chart sources that set insecureSkipTLSVerify (condition reason InsecureSkipTLSVerifyForbidden) and Cluster kubeconfigs that set insecure-skip-tls-verify (InvalidKubeconfig)")
	fs.DurationVar(&o.manager.ProbeInterval, "cluster-probe-interval", clustercontroller.DefaultProbeInterval, "time between two health probes of a cluster")
	fs.DurationVar(&o.manager.ProbeRetryInterval, "cluster-probe-retry-interval", clustercontroller.DefaultProbeRetryInterval, "time between two health probes of a cluster whose probes fail within the connection grace")
	fs.DurationVar(&o.manager.ConnectionGrace, "cluster-connection-grace", clustercontroller.DefaultConnectionGrace, "how long failing probes keep a cluster Connected after its last success")
	fs.DurationVar(&o.manager.StatusHeartbeat, "cluster-status-heartbeat", clustercontroller.DefaultStatusHeartbeat, "longest time a healthy cluster's probe times go unwritten to status")
}

func (o *controllerOptions) hubConfig() (*rest.Config, error) { return loadHubConfig(o.kubeconfig) }

// loadHubConfig loads the hub's kubeconfig from a file, or, when none is named, finds the hub
// as controller-runtime does: in-cluster, then $KUBECONFIG, then ~/.kube/config.
func loadHubConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("loading hub kubeconfig %s: %w", kubeconfig, err)
		}
		return cfg, nil
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("finding the hub (give --kubeconfig): %w", err)
	}
	return cfg, nil
}

func newControllerCommand() *cobra.Command {
	o := &controllerOptions{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the Holdfast controller against a hub cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.hubConfig()
			if err != nil {
				return err
			}
			setMemoryLimit()
			mgr, _, err := controller.NewManager(cmd.Context(), cfg, o.manager)
			if err != nil {
				return err
			}
			ctrl.Log.Info("Starting Holdfast controller", "hub", cfg.Host)
			if err := mgr.Start(cmd.Context()); err != nil {
				return fmt.Errorf("running the manager: %w", err)
			}
			return nil
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// setMemoryLimit tells the Go runtime 90% of the container's memory limit (the cgroup's), unless
// GOMEMLIMIT is set (AUTOMEMLIMIT=off turns it off): the heap may otherwise grow to twice what is
// live before it is collected, and under a limit that growth is an OOM kill, not a collection. A
// thousand clusters hold about 600 MiB live and peaked above the chart's 1 GiB limit without it.
func setMemoryLimit() {
	log := ctrl.Log.WithName("memory")
	if _, err := memlimit.Set(memlimit.WithLogger(slog.New(logr.ToSlogHandler(log)))); err != nil {
		log.Error(err, "Running without a Go memory limit")
	}
}

// addHubLimitFlags adds --hub-qps and --hub-burst, the client-side limit of the requests to the
// hub (controller.HubLimit), to the controller's or the agent's flags.
func addHubLimitFlags(fs *pflag.FlagSet, o *controller.Options) {
	fs.Float32Var(&o.HubQPS, "hub-qps", 0, "requests per second Holdfast may send to the hub, per kind of object; 0 sets no limit of its own (the kubeconfig's, if it sets one, or none: the hub API server's priority and fairness)")
	fs.IntVar(&o.HubBurst, "hub-burst", 0, "burst of requests Holdfast may send to the hub with --hub-qps (0: twice --hub-qps)")
}

package measure

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
)

// A simulated fleet (issue 14): many clusters on a few API servers. Cluster sim-NNNN is the
// namespace sim-NNNN on its server (round robin), reached with credentials of its own limited to
// that namespace — a client certificate for the user holdfast-sim-NNNN minted by the server's CA
// and a Role with every permission in the namespace, nothing cluster-wide — so its watches see
// only its own objects, as on real clusters, and Holdfast watches each kind in the namespace.

// SimFleetLabel is the label every simulated Cluster has, with the value SimFleetValue: select
// them with it.
const (
	SimFleetLabel = "fleet"
	SimFleetValue = "sim"
	// SimServerLabel names a simulated Cluster's API server.
	SimServerLabel = "bench.holdfast.dev/server"
	// simSetupWorkers register the simulated clusters.
	simSetupWorkers = 16
)

// SimFleetOptions describe a simulated fleet.
type SimFleetOptions struct {
	// Servers are the target API servers the Clusters share (without kube-controller-manager).
	Servers int
	// Clusters is the number of simulated clusters.
	Clusters int
	// Labels, if set, gives the labels of the i-th simulated Cluster besides SimFleetLabel and
	// SimServerLabel.
	Labels func(i int) map[string]string
	// Pull makes the simulated clusters without registering them: each one's namespace-limited
	// kubeconfig is kept in Kubeconfigs, for its agent (the caller registers the Pull Clusters).
	Pull bool
}

// SimFleet is a Harness whose targets hold simulated clusters. Its ServerOf counts each
// simulated cluster's requests under its API server.
type SimFleet struct {
	*Harness
	// Sims are the simulated clusters' names, in order; Server is the index of each one's API
	// server in Names, Clientsets and Fleet.Targets.
	Sims   []string
	Server map[string]int
	// Kubeconfigs are the simulated clusters' own kubeconfigs, by name, with Pull.
	Kubeconfigs map[string][]byte
	mu          sync.Mutex
}

// SimName is the name of the i-th simulated cluster (from 0): its Cluster and its namespace.
func SimName(i int) string { return fmt.Sprintf("sim-%04d", i+1) }

// StartSimFleet starts a hub and opts.Servers API servers (this program's clients of them not
// rate-limited) and registers opts.Clusters simulated clusters on them; the API servers' own
// Clusters are removed. Stop tears it down.
func StartSimFleet(ctx context.Context, opts SimFleetOptions) (*SimFleet, error) {
	h, err := StartFleet(ctx, FleetOptions{Clusters: opts.Servers, UnlimitedClients: true})
	if err != nil {
		return nil, err
	}
	f := &SimFleet{Harness: h, Server: map[string]int{}, Kubeconfigs: map[string][]byte{}}
	for i := range opts.Clusters {
		f.Sims = append(f.Sims, SimName(i))
		f.Server[SimName(i)] = i % opts.Servers
	}
	h.ServerOf = func(c types.NamespacedName) string { return h.Names[f.Server[c.Name]] }
	if err := f.register(ctx, opts); err != nil {
		return nil, errors.Join(err, h.Stop())
	}
	return f, nil
}

// register removes the API servers' own Clusters (registered by localfleet with admin
// credentials: not part of the simulated fleet) and registers the simulated ones.
func (f *SimFleet) register(ctx context.Context, opts SimFleetOptions) error {
	for _, name := range f.Names {
		c := &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.Fleet.Namespace, Name: name}}
		if err := f.Hub.Delete(ctx, c); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Cluster %s: %w", name, err)
		}
	}
	// The hub client of localfleet has client-go's default rate limit (5 requests/s): registering
	// a thousand clusters through it would take a quarter of an hour.
	hubCfg := rest.CopyConfig(f.Fleet.Hub.RESTConfig())
	hubCfg.QPS, hubCfg.Burst = -1, 0
	scheme, err := controller.Scheme()
	if err != nil {
		return err
	}
	hub, err := client.New(hubCfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("building the hub client: %w", err)
	}
	fmt.Fprintf(os.Stderr, "%d clusters: registering them\n", len(f.Sims))
	return Parallel(ctx, simSetupWorkers, len(f.Sims), func(ctx context.Context, i int) error {
		labels := map[string]string{}
		if opts.Labels != nil {
			maps.Copy(labels, opts.Labels(i))
		}
		return f.registerOne(ctx, hub, f.Sims[i], labels, opts.Pull)
	})
}

// registerOne makes one simulated cluster: its namespace on its API server, a user limited to
// it, and its Cluster on the hub, or with pull its kubeconfig in Kubeconfigs.
func (f *SimFleet) registerOne(ctx context.Context, hub client.Client, name string, labels map[string]string, pull bool) error {
	k := f.Server[name]
	cs, target := f.Clientsets[k], f.Fleet.Targets[k]
	user := "holdfast-" + name
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s on %s: %w", name, target.Name(), err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "holdfast"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	if _, err := cs.RbacV1().Roles(name).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Role %s/holdfast on %s: %w", name, target.Name(), err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "holdfast"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "holdfast"}}
	if _, err := cs.RbacV1().RoleBindings(name).Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating RoleBinding %s/holdfast on %s: %w", name, target.Name(), err)
	}
	kubeconfig, err := target.KubeconfigForUser(user)
	if err != nil {
		return err
	}
	if pull {
		f.mu.Lock()
		f.Kubeconfigs[name] = kubeconfig
		f.mu.Unlock()
		return nil
	}
	labels[SimFleetLabel], labels[SimServerLabel] = SimFleetValue, f.Names[k]
	if _, err := fleet.Register(ctx, hub, fleet.Registration{Namespace: f.Fleet.Namespace, Name: name,
		Labels: labels, Kubeconfig: kubeconfig}); err != nil {
		return fmt.Errorf("registering %s: %w", name, err)
	}
	return nil
}

// SimService is the service of every service set CreateSimServiceSet creates.
const SimService = "app"

// CreateSimServiceSet creates a MultiClusterService in ContinuousWithDriftDetection mode that
// selects every simulated cluster, with one service, SimService, deploying template: a Go
// template that puts each object in the cluster's namespace (which exists: it is the simulated
// cluster), so the service does not create a namespace. Its fight limit is FightMax: the
// benchmarks edit the same objects again and again. Each of opts may change it before.
func (f *SimFleet) CreateSimServiceSet(ctx context.Context, name string, template holdfastv1.TemplateReference, opts ...func(*holdfastv1.MultiClusterService)) error {
	sim := func(mcs *holdfastv1.MultiClusterService) {
		mcs.Spec.ClusterSelector.LabelSelector = metav1.LabelSelector{MatchLabels: map[string]string{SimFleetLabel: SimFleetValue}}
		mcs.Spec.Services[0].CreateNamespace = new(false)
		RaiseFightLimit(mcs)
	}
	return f.CreateServiceSet(ctx, name, holdfastv1.SyncModeContinuousWithDriftDetection, SimService, template, "", append([]func(*holdfastv1.MultiClusterService){sim}, opts...)...)
}

// WaitClustersReady waits until every simulated Cluster is Ready, in whichever namespace (a Pull
// cluster has its own).
func (f *SimFleet) WaitClustersReady(ctx context.Context, timeout time.Duration) error {
	ready := 0
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		clusters := &holdfastv1.ClusterList{}
		if err := f.Hub.List(ctx, clusters, client.MatchingLabels{SimFleetLabel: SimFleetValue}); err != nil {
			return false, nil //nolint:nilerr // the hub may be busy; keep polling until the timeout
		}
		ready = 0
		for i := range clusters.Items {
			if conditions.IsTrue(&clusters.Items[i], holdfastv1.ReadyCondition) {
				ready++
			}
		}
		return ready == len(f.Sims), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the Clusters to become Ready (%d of %d): %w", ready, len(f.Sims), err)
	}
	return nil
}

// CPUTimes is CPU time (user+sys) used so far by this process (the controller, with this
// program's own watches and clients), the hub's control plane and the targets' control planes.
type CPUTimes struct {
	Self, Hub, Targets time.Duration
}

// CPU is the CPU time used so far by this process, the hub and the targets.
func (h *Harness) CPU() CPUTimes {
	var c CPUTimes
	c.Self, _ = CPUTime(os.Getpid())
	for _, pid := range h.Fleet.Hub.PIDs() {
		if d, err := CPUTime(pid); err == nil {
			c.Hub += d
		}
	}
	c.Targets = h.TargetsCPU()
	return c
}

// Minus is the CPU time used from o to c.
func (c CPUTimes) Minus(o CPUTimes) CPUTimes {
	return CPUTimes{Self: c.Self - o.Self, Hub: c.Hub - o.Hub, Targets: c.Targets - o.Targets}
}

// String is the three CPU times, for one cell of a table.
func (c CPUTimes) String() string {
	return Seconds(c.Self) + " / " + Seconds(c.Hub) + " / " + Seconds(c.Targets)
}

// SimManifests is a template of a simulated fleet at revision rev, a Go template: a ConfigMap of
// each of names labelled label=value (no label when label is ""), whose data is the declared value
// (ValueKey), the revision and one more key; two Secrets and a ServiceAccount. Each object is in
// the namespace named after the cluster, which is the simulated cluster.
func SimManifests(names []string, rev int, label, value string) string {
	d := NewDocs("")
	labels := ""
	if label != "" {
		labels = fmt.Sprintf("\n  labels:\n    %s: %s", label, value)
	}
	for _, name := range names {
		d.Add(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: "{{ .Cluster.Name }}"%s
data:
  %s: %s
  rev: "%d"
  LOG_LEVEL: info
`, name, labels, ValueKey, DeclaredValue(name), rev)
	}
	for i := range 2 {
		d.Add(`apiVersion: v1
kind: Secret
metadata:
  name: secret-%d
  namespace: "{{ .Cluster.Name }}"
type: Opaque
stringData:
  token: planted-%d
`, i, i)
	}
	d.Add(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: app
  namespace: "{{ .Cluster.Name }}"
`)
	return d.String()
}

package measure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/tenancy"
)

// FleetOptions describe the fleet a Harness starts.
type FleetOptions struct {
	// Clusters is the number of targets.
	Clusters int
	// ControllerManager runs kube-controller-manager on each target.
	ControllerManager bool
	// UnlimitedClients turns off client-side rate limiting of this program's own target clients.
	UnlimitedClients bool
}

// Harness is what the benchmarks that run the controller share: a hub and targets from
// internal/localfleet, this program's own clients (uncounted: they do not go through the
// controller's transports), and the Holdfast controller in this process with every request it
// sends counted by Counter, per target and "hub".
type Harness struct {
	Fleet *localfleet.Fleet
	// Hub creates and reads objects on the hub; Watcher watches status objects.
	Hub     client.Client
	Watcher client.WithWatch
	// Raw reads objects from the hub as served, for their size.
	Raw rest.Interface
	// Targets are direct clients of the targets, in the order of Names.
	Targets    []client.Client
	Clientsets []kubernetes.Interface
	Names      []string
	// Statuses maps the status objects this program waits for to their cluster (see
	// ExpectServiceSet).
	Statuses map[string]string
	// StatusesEverywhere makes WaitStatuses look for them in every namespace, not only the
	// fleet's (Pull clusters have a namespace each).
	StatusesEverywhere bool
	// Counter counts the controller's requests; Servers is the column order of request tables:
	// the targets, then the hub.
	Counter *RequestCounter
	Servers []string
	// Registry is the controller's fleet registry, once StartController returned.
	Registry *fleet.Registry
	// FleetUp is how long StartFleet took: the fleet (in parallel), its CRDs and registration,
	// and this program's clients.
	FleetUp time.Duration
	// Started is when the controller's manager started.
	Started time.Time
	// ServerOf names the server column a target cluster's requests are counted in; the
	// cluster's name when nil (one cluster per API server). Set it before StartController or
	// StartReplica.
	ServerOf func(cluster types.NamespacedName) string

	// managers are the controller and the replicas started, stopped by Stop.
	managers []*Replica
}

// StartFleet checks that the control-plane binaries are there, starts the fleet and builds
// this program's clients. Stop tears it down.
func StartFleet(ctx context.Context, opts FleetOptions) (*Harness, error) {
	if _, err := sandbox.BinaryDir(); err != nil {
		return nil, err
	}
	began := time.Now()
	f, err := localfleet.Up(ctx, localfleet.Options{Clusters: opts.Clusters, NoControllerManager: !opts.ControllerManager})
	if err != nil {
		return nil, fmt.Errorf("starting the fleet: %w", err)
	}
	h := &Harness{Fleet: f, Statuses: map[string]string{}, Counter: NewRequestCounter()}
	if err := h.clients(opts); err != nil {
		return nil, errors.Join(err, f.Stop())
	}
	h.FleetUp = time.Since(began)
	return h, nil
}

// Setup says how a benchmark that runs the controller starts (Start).
type Setup struct {
	FleetOptions
	// HubQPS is the controller's hub client rate limit; 0 leaves it to NewManager's default.
	HubQPS float32
	// ReadyTimeout bounds the wait until every Cluster is Ready.
	ReadyTimeout time.Duration
	// BeforeController, if set, runs once the fleet is up, before the controller starts: what
	// must be there, or be measured, without the controller (templates, this program's own
	// watches, a baseline of this process's memory).
	BeforeController func(*Harness) error
}

// Start is how the benchmarks that run the controller begin: it prints the machine (their
// output's first line), starts the fleet (StartFleet; FleetUp says how long it took), runs
// BeforeController, starts the controller with default options (StartController) and waits until
// every Cluster is Ready. Progress goes to stderr. On an error it stops what it started;
// otherwise Stop tears it down.
func Start(ctx context.Context, s Setup) (*Harness, error) {
	fmt.Printf("Machine: %s\n\n", Machine())
	targets := fmt.Sprintf("%d targets", s.Clusters)
	if s.Clusters == 1 {
		targets = "one target"
	}
	kcm := map[bool]string{true: "with", false: "without"}[s.ControllerManager]
	fmt.Fprintf(os.Stderr, "Starting a hub and %s %s kube-controller-manager\n", targets, kcm)
	h, err := StartFleet(ctx, s.FleetOptions)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "Fleet up in %s, load average %s\n", h.FleetUp.Round(time.Millisecond), LoadAverage())
	if err := h.startController(ctx, s); err != nil {
		return nil, errors.Join(err, h.Stop())
	}
	return h, nil
}

// startController is Start's part once the fleet is up.
func (h *Harness) startController(ctx context.Context, s Setup) error {
	if s.BeforeController != nil {
		if err := s.BeforeController(h); err != nil {
			return err
		}
	}
	if err := h.StartController(ctx, s.HubQPS, controller.Options{}); err != nil {
		return err
	}
	return h.WaitClustersReady(ctx, s.ReadyTimeout)
}

func (h *Harness) clients(opts FleetOptions) error {
	scheme, err := controller.Scheme()
	if err != nil {
		return err
	}
	h.Hub = h.Fleet.HubClient()
	if h.Watcher, err = client.NewWithWatch(h.Fleet.Hub.RESTConfig(), client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("building the hub watch client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(h.Fleet.Hub.RESTConfig())
	if err != nil {
		return fmt.Errorf("building the hub clientset: %w", err)
	}
	h.Raw = cs.Discovery().RESTClient()
	for _, t := range h.Fleet.Targets {
		cfg := rest.CopyConfig(t.RESTConfig())
		if opts.UnlimitedClients {
			cfg.QPS, cfg.Burst = -1, 0
		}
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return fmt.Errorf("building a client of %s: %w", t.Name(), err)
		}
		tcs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("building a clientset of %s: %w", t.Name(), err)
		}
		h.Targets = append(h.Targets, c)
		h.Clientsets = append(h.Clientsets, tcs)
		h.Names = append(h.Names, t.Name())
	}
	h.Servers = append(slices.Clone(h.Names), "hub")
	return nil
}

// ExpectServiceSet adds the status objects of a MultiClusterService on every target to those
// WaitStatuses waits for.
func (h *Harness) ExpectServiceSet(name string) {
	for _, n := range h.Names {
		h.Statuses[naming.StatusName(name, n)] = n
	}
}

// StartController builds the controller (controller.NewManager) with counted transports and
// starts it. hubQPS 0 leaves the hub client's rate limit to NewManager's default.
func (h *Harness) StartController(ctx context.Context, hubQPS float32, opts controller.Options) error {
	r, err := h.startManager(ctx, hubQPS, opts, nil)
	if err != nil {
		return err
	}
	h.Registry, h.Started = r.Registry, r.Started
	return nil
}

// startManager builds a controller manager whose requests Counter counts, and own too when not
// nil, and starts it. opts.TargetTransport, if set, wraps the counted transports.
func (h *Harness) startManager(ctx context.Context, hubQPS float32, opts controller.Options, own *RequestCounter) (*Replica, error) {
	count := func(server string, rt http.RoundTripper) http.RoundTripper {
		rt = h.Counter.Wrap(server, rt)
		if own != nil {
			rt = own.Wrap(server, rt)
		}
		return rt
	}
	hubCfg := rest.CopyConfig(h.Fleet.Hub.RESTConfig())
	hubCfg.QPS = hubQPS
	hubCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return count("hub", rt) })
	opts.MetricsAddr, opts.HealthAddr = "0", "0"
	if len(opts.PlatformNamespaces) == 0 {
		// The benchmarks' hub has one team: their templates live in namespaces of their own.
		opts.PlatformNamespaces = []string{tenancy.AllNamespaces}
	}
	wrap := opts.TargetTransport
	opts.TargetTransport = func(cluster types.NamespacedName, rt http.RoundTripper) http.RoundTripper {
		server := cluster.Name
		if h.ServerOf != nil {
			server = h.ServerOf(cluster)
		}
		rt = count(server, rt)
		if wrap != nil {
			rt = wrap(cluster, rt)
		}
		return rt
	}
	mgr, registry, err := controller.NewManager(ctx, hubCfg, opts)
	if err != nil {
		return nil, err
	}
	mgrCtx, cancel := context.WithCancel(ctx)
	r := &Replica{ID: opts.ShardID, Counter: own, Registry: registry, cancel: cancel, done: make(chan error, 1), Started: time.Now()}
	go func() { r.done <- mgr.Start(mgrCtx) }()
	h.managers = append(h.managers, r)
	return r, nil
}

// Stop stops the controller and every replica still running, and the fleet.
func (h *Harness) Stop() error {
	var errs []error
	for _, r := range h.managers {
		errs = append(errs, r.Stop())
	}
	return errors.Join(append(errs, h.Fleet.Stop())...)
}

// CreateTemplate creates an inline ServiceTemplate (and its namespace on the hub); each of opts
// may change it before.
func (h *Harness) CreateTemplate(ctx context.Context, namespace, name, yaml string, opts ...func(*holdfastv1.ServiceTemplate)) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := h.Hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	tpl := &holdfastv1.ServiceTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       holdfastv1.ServiceTemplateSpec{Inline: yaml},
	}
	for _, o := range opts {
		o(tpl)
	}
	if err := h.Hub.Create(ctx, tpl); err != nil {
		return fmt.Errorf("creating ServiceTemplate %s/%s: %w", namespace, name, err)
	}
	return nil
}

// FightMax is the most a service set's fight limit (spec.drift.fight.maxCorrections) may be.
// Benchmarks that edit the same objects again and again raise the limit to it
// (RaiseFightLimit): with the default (5 corrections within 10 minutes) the objects would become
// Contested after a few edits each, and be corrected only after a backoff.
const FightMax = 1000

// RaiseFightLimit is an option of CreateServiceSet: the fight limit at FightMax.
func RaiseFightLimit(mcs *holdfastv1.MultiClusterService) {
	mcs.Spec.Drift = &holdfastv1.DriftPolicy{Fight: &holdfastv1.FightPolicy{MaxCorrections: FightMax}}
}

// GoTemplate is an option of CreateTemplate: the template is a Go template (it may name the
// cluster, as in {{ .Cluster.Name }}).
func GoTemplate(t *holdfastv1.ServiceTemplate) { t.Spec.Templating = holdfastv1.TemplatingGoTemplate }

// CreateServiceSet creates a MultiClusterService selecting every target of the fleet with one
// service, deploying the template to targetNamespace; each of opts may change it before.
func (h *Harness) CreateServiceSet(ctx context.Context, name string, mode holdfastv1.SyncMode, service string, template holdfastv1.TemplateReference, targetNamespace string, opts ...func(*holdfastv1.MultiClusterService)) error {
	mcs := &holdfastv1.MultiClusterService{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "sandbox"}}},
			SyncMode:        mode,
			Services:        []holdfastv1.Service{{Name: service, Template: template, Namespace: targetNamespace}},
		},
	}
	for _, o := range opts {
		o(mcs)
	}
	if err := h.Hub.Create(ctx, mcs); err != nil {
		return fmt.Errorf("creating MultiClusterService %s: %w", name, err)
	}
	return nil
}

// DeleteServiceSet deletes a MultiClusterService and waits until it is gone: the controller
// removes its finalizer once every status object withdrew what it deployed. Its status objects
// leave Statuses.
func (h *Harness) DeleteServiceSet(ctx context.Context, name string, timeout time.Duration) error {
	mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := h.Hub.Delete(ctx, mcs); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting MultiClusterService %s: %w", name, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		err := h.Hub.Get(ctx, client.ObjectKeyFromObject(mcs), mcs)
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for MultiClusterService %s to be withdrawn and gone: %w", name, err)
	}
	for _, n := range h.Names {
		delete(h.Statuses, naming.StatusName(name, n))
	}
	return nil
}

// WaitClustersReady polls the hub until every Cluster is Ready.
func (h *Harness) WaitClustersReady(ctx context.Context, timeout time.Duration) error {
	return h.Fleet.WaitClustersReady(ctx, timeout)
}

// WaitStatuses watches the status objects until ok holds for every one in Statuses, and returns
// when it first held for each, by status object name. It keeps no status object, so that the
// controller's memory is not inflated by this program's.
func (h *Harness) WaitStatuses(ctx context.Context, timeout time.Duration, ok func(*holdfastv1.ClusterServiceStatus) bool) (map[string]time.Time, error) {
	return h.WatchStatuses(ctx, timeout, ok, nil)
}

// WatchStatuses is WaitStatuses calling listed, if not nil, once its first list was read (or it
// gave up): run it on a goroutine, and what changes after listed is seen as it changes, not when
// a list made later returns.
func (h *Harness) WatchStatuses(ctx context.Context, timeout time.Duration, ok func(*holdfastv1.ClusterServiceStatus) bool, listed func()) (map[string]time.Time, error) {
	var once sync.Once
	if listed != nil {
		defer once.Do(listed)
	} else {
		listed = func() {}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	at := map[string]time.Time{}
	last := map[string]string{}
	see := func(css *holdfastv1.ClusterServiceStatus) {
		if _, mine := h.Statuses[css.Name]; !mine {
			return
		}
		if _, done := at[css.Name]; !done && ok(css) {
			at[css.Name] = time.Now()
		}
		last[css.Name] = DescribeStatus(css)
	}
	for len(at) < len(h.Statuses) {
		list := &holdfastv1.ClusterServiceStatusList{}
		if err := h.Watcher.List(ctx, list, client.InNamespace(h.statusNamespace())); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%d of %d done (%v): %w", len(at), len(h.Statuses), last, err)
			}
			time.Sleep(time.Second)
			continue
		}
		for i := range list.Items {
			see(&list.Items[i])
		}
		once.Do(listed)
		rv := list.ResourceVersion
		list = nil
		if len(at) == len(h.Statuses) {
			break
		}
		w, err := h.Watcher.Watch(ctx, &holdfastv1.ClusterServiceStatusList{}, client.InNamespace(h.statusNamespace()),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%d of %d done (%v): %w", len(at), len(h.Statuses), last, err)
			}
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				break
			}
			if css, isCSS := ev.Object.(*holdfastv1.ClusterServiceStatus); isCSS && ev.Type != watch.Deleted {
				see(css)
			}
			if len(at) == len(h.Statuses) {
				break
			}
		}
		w.Stop()
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%d of %d done (last seen: %v): %w", len(at), len(h.Statuses), last, err)
		}
	}
	return at, nil
}

// ChangeTemplate gives the inline ServiceTemplate namespace/name the manifests inline.
func (h *Harness) ChangeTemplate(ctx context.Context, namespace, name, inline string) error {
	tpl := &holdfastv1.ServiceTemplate{}
	if err := h.Hub.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, tpl); err != nil {
		return fmt.Errorf("reading the template: %w", err)
	}
	tpl.Spec.Inline = inline
	if err := h.Hub.Update(ctx, tpl); err != nil {
		return fmt.Errorf("changing the template: %w", err)
	}
	return nil
}

// ServiceRevisions are the revisions of the status objects with one service, by name, where
// WaitStatuses looks: after a template change, a status object with another one has it.
func (h *Harness) ServiceRevisions(ctx context.Context) (map[string]string, error) {
	list := &holdfastv1.ClusterServiceStatusList{}
	if err := h.Hub.List(ctx, list, client.InNamespace(h.statusNamespace())); err != nil {
		return nil, fmt.Errorf("listing status objects: %w", err)
	}
	out := map[string]string{}
	for _, css := range list.Items {
		if len(css.Status.Services) == 1 {
			out[css.Name] = css.Status.Services[0].Revision
		}
	}
	return out, nil
}

// statusNamespace is where WaitStatuses looks for status objects ("" is every namespace).
func (h *Harness) statusNamespace() string {
	if h.StatusesEverywhere {
		return metav1.NamespaceAll
	}
	return h.Fleet.Namespace
}

// ReadyInSync is a WaitStatuses condition: Ready, with n objects all in sync.
func ReadyInSync(n int) func(*holdfastv1.ClusterServiceStatus) bool {
	return func(css *holdfastv1.ClusterServiceStatus) bool {
		return meta.IsStatusConditionTrue(css.Status.Conditions, holdfastv1.ReadyCondition) &&
			int(css.Status.ResourceCount) == n && int(css.Status.InSyncCount) == n
	}
}

// DescribeStatus summarises a status object for a timeout message.
func DescribeStatus(css *holdfastv1.ClusterServiceStatus) string {
	var conds []string
	for _, c := range css.Status.Conditions {
		s := c.Type + "=" + string(c.Status) + "/" + c.Reason
		if c.Status != metav1.ConditionTrue && c.Message != "" {
			msg := c.Message
			if len(msg) > 300 {
				msg = msg[:300] + "…"
			}
			s += " (" + msg + ")"
		}
		conds = append(conds, s)
	}
	return fmt.Sprintf("resources %d, in sync %d, failed %d, handled %q, conditions %s",
		css.Status.ResourceCount, css.Status.InSyncCount, css.Status.FailedCount, css.Status.LastHandledReconcileAt, strings.Join(conds, ", "))
}

// ParseRV reads a resourceVersion as the etcd revision it is on these API servers (-1 if it is
// not a number), so that versions of one object can be ordered.
func ParseRV(rv string) int64 {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// TargetsCPU is the CPU time the targets' control-plane processes used so far.
func (h *Harness) TargetsCPU() time.Duration {
	var sum time.Duration
	for _, t := range h.Fleet.Targets {
		for _, pid := range t.PIDs() {
			if d, err := CPUTime(pid); err == nil {
				sum += d
			}
		}
	}
	return sum
}

// SelfMemory returns this process's Go heap in use after a forced collection, and its RSS.
func SelfMemory() (heapInuse, rss int64, err error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, err = RSS(os.Getpid())
	return int64(ms.HeapInuse), rss, err
}

// StartHubCPUProfile starts a CPU profile of the hub's API server (its /debug/pprof/profile,
// on by default) for seconds, written to path once it ends; the returned function waits for it.
// With path "" it profiles nothing.
func (h *Harness) StartHubCPUProfile(ctx context.Context, path string, seconds int) (wait func() error) {
	if path == "" {
		return func() error { return nil }
	}
	done := make(chan error, 1)
	go func() {
		body, err := h.Raw.Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(seconds)).
			Timeout(time.Duration(seconds+30) * time.Second).DoRaw(ctx)
		if err != nil {
			done <- fmt.Errorf("profiling the hub's API server: %w", err)
			return
		}
		done <- os.WriteFile(path, body, 0o644)
	}()
	return func() error { return <-done }
}

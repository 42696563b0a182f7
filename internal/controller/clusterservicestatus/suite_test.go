package clusterservicestatus_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/chartserver"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/testsupport"
)

// The suite runs a hub and two targets with kube-controller-manager (cluster-1 is env=dev,
// cluster-2 env=prod), a chart repository and an OCI registry on loopback, and the manager,
// which tests may restart. The controllers' clock runs at real speed; a test can move it hours ahead.
const (
	templateNamespace = "templates"
	clusterNamespace  = localfleet.DefaultNamespace
	timeout           = 90 * time.Second
	poll              = 200 * time.Millisecond
)

var (
	fl       *localfleet.Fleet
	hub      client.Client
	targets  = map[string]client.Client{}
	clk      = &shiftedClock{}
	repo     *chartserver.Repo
	registry *chartserver.Registry
	logs     = &testsupport.LogBuffer{}

	mgrMu     sync.Mutex
	mgrCancel context.CancelFunc
	mgrDone   chan error
	// hubCache is the running manager's cache of hub objects; targetFleet its connections to
	// the targets.
	hubCache    client.Reader
	targetFleet *fleet.Registry
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	if run, code := testsupport.BinariesForMain(); !run {
		return code
	}
	ctx := context.Background()
	var err error
	if fl, err = localfleet.Up(ctx, localfleet.Options{Clusters: 2, Nodes: 1}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = fl.Stop() }()
	hub = fl.HubClient()
	for _, t := range fl.Targets {
		// Unthrottled: a test that samples the targets (rolloutFleet.watchOrder) must read
		// them when it says it does, not when client-go's default 5 requests a second allow.
		cfg := t.RESTConfig()
		cfg.QPS, cfg.Burst = -1, 0
		c, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		targets[t.Name()] = c
	}
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: templateNamespace}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := startCharts(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer repo.Close()
	defer registry.Close()

	var out io.Writer = logs
	if testing.Verbose() {
		out = io.MultiWriter(logs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(out), zap.UseDevMode(true)))
	if err := startManager(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := stopManager(); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	return code
}

// startCharts serves the hello chart, versions 1.0.0 and 1.1.0, and the generated chart,
// version 1.0.0, from a chart repository and an OCI registry.
func startCharts() error {
	repo = chartserver.NewRepo()
	var err error
	if registry, err = chartserver.NewRegistry(); err != nil {
		return err
	}
	packages := []func() ([]byte, error){
		func() ([]byte, error) { return chartserver.Hello("1.0.0") },
		func() ([]byte, error) { return chartserver.Hello("1.1.0") },
		func() ([]byte, error) { return chartserver.Generated("1.0.0") },
	}
	for _, pkg := range packages {
		tgz, err := pkg()
		if err != nil {
			return err
		}
		if err := repo.Add(tgz); err != nil {
			return err
		}
		if _, err := registry.Push(tgz); err != nil {
			return err
		}
	}
	return nil
}

// managerOptions are the options the suite's controllers run with: the Clusters' namespace and
// the templates' are the platform namespaces.
func managerOptions() controller.Options {
	return controller.Options{
		PlatformNamespaces: []string{clusterNamespace, templateNamespace},
		MetricsAddr:        "0", HealthAddr: "0", ProbeInterval: 500 * time.Millisecond, ConnectionGrace: 2 * time.Second,
		Clock: clk, SkipNameValidation: true, TargetTransport: partitionable, TargetDial: dialThroughLinks,
	}
}

// startManager starts the controllers against the hub with the suite's options.
func startManager() error { return startManagerWith(managerOptions()) }

// startManagerWith starts the controllers against the hub.
func startManagerWith(opts controller.Options) error {
	mgrMu.Lock()
	defer mgrMu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := rest.CopyConfig(fl.Hub.RESTConfig())
	cfg.Wrap(interceptHub)
	mgr, reg, err := controller.NewManager(ctx, cfg, opts)
	if err != nil {
		cancel()
		return err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return fmt.Errorf("hub cache did not sync")
	}
	mgrCancel, mgrDone, hubCache, targetFleet = cancel, done, mgr.GetCache(), reg
	return nil
}

// stopManager stops the controllers and waits until they have.
func stopManager() error {
	mgrMu.Lock()
	defer mgrMu.Unlock()
	mgrCancel()
	return <-mgrDone
}

// restartManager stops the controllers and starts new ones, as a controller restart does.
func restartManager(t *testing.T) {
	t.Helper()
	if err := stopManager(); err != nil {
		t.Fatalf("stopping the manager: %v", err)
	}
	if err := startManager(); err != nil {
		t.Fatalf("starting the manager: %v", err)
	}
}

// restartManagerWith restarts the controllers with the suite's options changed by change, for
// the rest of the test; the suite's own options come back when it ends.
func restartManagerWith(t *testing.T, change func(*controller.Options)) {
	t.Helper()
	if err := stopManager(); err != nil {
		t.Fatalf("stopping the manager: %v", err)
	}
	opts := managerOptions()
	change(&opts)
	if err := startManagerWith(opts); err != nil {
		t.Fatalf("starting the manager: %v", err)
	}
	t.Cleanup(func() { restartManager(t) })
}

// objName derives a name unique to the test from its name.
func objName(t *testing.T, suffix string) string {
	n := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	logs.ShowOnFailure(t, strings.TrimLeft(n[max(0, len(n)-40):], "-"), 400)
	if suffix != "" {
		n += "-" + suffix
	}
	if len(n) > 50 {
		n = n[len(n)-50:]
		n = strings.TrimLeft(n, "-")
	}
	return n
}

// createTemplate creates a ServiceTemplate in the template namespace.
func createTemplate(t *testing.T, name string, spec holdfastv1.ServiceTemplateSpec) {
	t.Helper()
	tpl := &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: name}, Spec: spec}
	if err := hub.Create(context.Background(), tpl); err != nil {
		t.Fatalf("creating ServiceTemplate %s: %v", name, err)
	}
	t.Cleanup(func() { _ = hub.Delete(context.Background(), tpl) })
}

// createServiceSet creates a MultiClusterService and deletes it, waiting until it is gone, when
// the test ends.
func createServiceSet(t *testing.T, name string, spec holdfastv1.MultiClusterServiceSpec) *holdfastv1.MultiClusterService {
	t.Helper()
	mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if err := hub.Create(context.Background(), mcs); err != nil {
		t.Fatalf("creating MultiClusterService %s: %v", name, err)
	}
	t.Cleanup(func() { deleteServiceSet(t, name) })
	return mcs
}

func deleteServiceSet(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := hub.Delete(ctx, mcs); client.IgnoreNotFound(err) != nil {
		t.Fatalf("deleting MultiClusterService %s: %v", name, err)
	}
	NewWithT(t).Eventually(func() bool {
		return apiNotFound(hub.Get(ctx, client.ObjectKey{Name: name}, mcs))
	}).WithTimeout(timeout).WithPolling(poll).Should(BeTrue(), "MultiClusterService %s still exists", name)
}

func apiNotFound(err error) bool { return client.IgnoreNotFound(err) == nil && err != nil }

// selectEnv selects the sandbox clusters with the given env label ("" selects all).
func selectEnv(env string) holdfastv1.ClusterSelector {
	labels := map[string]string{"fleet": "sandbox"}
	if env != "" {
		labels["env"] = env
	}
	return holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: labels}}
}

func service(name, template, namespace string) holdfastv1.Service {
	return holdfastv1.Service{Name: name, Template: holdfastv1.TemplateReference{Name: template, Namespace: templateNamespace}, Namespace: namespace}
}

// serviceOf is the status of service in css, or a zero one.
func serviceOf(css *holdfastv1.ClusterServiceStatus, service string) holdfastv1.ServiceStatus {
	for _, st := range css.Status.Services {
		if st.Name == service {
			return st
		}
	}
	return holdfastv1.ServiceStatus{}
}

// entryOf is css's inventory entry of the object of kind named name, or a zero one.
func entryOf(css *holdfastv1.ClusterServiceStatus, kind, name string) holdfastv1.ResourceStatus {
	for _, rs := range css.Status.Resources {
		if rs.Kind == kind && rs.Name == name {
			return rs
		}
	}
	return holdfastv1.ResourceStatus{}
}

// statusOf reads the ClusterServiceStatus of a service set on a cluster.
func statusOf(g Gomega, mcs, cluster string) *holdfastv1.ClusterServiceStatus {
	css := &holdfastv1.ClusterServiceStatus{}
	g.Expect(hub.Get(context.Background(), client.ObjectKey{Namespace: clusterNamespace, Name: naming.StatusName(mcs, cluster)}, css)).To(Succeed())
	return css
}

// condition returns the condition of type t, or a zero one.
func condition(conds []metav1.Condition, t string) metav1.Condition {
	for _, c := range conds {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

// eventually retries f until it passes.
func eventually(t *testing.T, f func(g Gomega), msg ...any) {
	t.Helper()
	NewWithT(t).Eventually(f).WithTimeout(timeout).WithPolling(poll).Should(Succeed(), msg...)
}

// consistently checks that f keeps passing for d.
func consistently(t *testing.T, d time.Duration, f func(g Gomega), msg ...any) {
	t.Helper()
	NewWithT(t).Consistently(f).WithTimeout(d).WithPolling(poll).Should(Succeed(), msg...)
}

// expectReady waits until the status object of mcs on cluster is Ready and provisioned.
func expectReady(t *testing.T, mcs, cluster string) *holdfastv1.ClusterServiceStatus {
	t.Helper()
	var css *holdfastv1.ClusterServiceStatus
	eventually(t, func(g Gomega) {
		css = statusOf(g, mcs, cluster)
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue),
			"Ready of %s on %s: %+v", mcs, cluster, css.Status.Conditions)
		g.Expect(css.Status.Initialization).NotTo(BeNil())
		g.Expect(css.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	})
	// kstatus (kubectl wait, Flux, Argo CD) agrees: Current.
	NewWithT(t).Expect(testsupport.KStatus(t, css, holdfastv1.GroupVersion.WithKind("ClusterServiceStatus"))).To(BeEquivalentTo("Current"))
	return css
}

// clusterKey is the key of a sandbox Cluster on the hub.
func clusterKey(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: clusterNamespace, Name: name}
}

// shiftedClock is the real clock shifted by an offset a test sets: time keeps passing (probes,
// grace periods and backoff behave), and a test can jump hours ahead.
type shiftedClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *shiftedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *shiftedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// SetTime moves the clock so that it reads t now.
func (c *shiftedClock) SetTime(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = time.Until(t)
}

// hanging holds the names of target clusters whose API server never answers a PATCH (every
// apply), as a hostile or broken target may.
var hanging sync.Map

// hungWrites counts the writes a hanging target held, by cluster name.
var hungWrites sync.Map

// partitioned holds the names of target clusters the controller cannot reach (a network
// partition between Holdfast and the cluster; the tests' own clients still reach it).
var partitioned sync.Map

// watchFault is what happens to the controller's watches of one cluster (see breakWatches and
// expireWatches); watchFaults holds it by cluster name. refusedWatches and expiredWatches
// count the watch requests refused and answered 410 by cluster and resource ("cluster-1/
// configmaps"; *atomic.Int64); openWatches
// holds the controller's open watch streams (*cuttableBody) with their cluster's name.
type watchFault struct{ expiredUpTo int64 }

var watchFaults, refusedWatches, expiredWatches, openWatches sync.Map

// breakWatches breaks the controller's open watch streams to cluster and refuses new watch
// requests (connection refused), as a proxy dropping long-lived connections does; everything
// else (lists, applies, probes) still goes through. healWatches ends it.
func breakWatches(cluster string) {
	watchFaults.Store(cluster, watchFault{})
	openWatches.Range(func(body, name any) bool {
		if name == cluster {
			_ = body.(*cuttableBody).ReadCloser.Close()
		}
		return true
	})
}

// expireWatches lets watches to cluster through again, but answers a watch resuming from a
// resourceVersion up to rv with 410 Gone ("too old resource version"), as an API server does
// once etcd compacted that revision away: the client must list again.
func expireWatches(cluster string, rv int64) { watchFaults.Store(cluster, watchFault{expiredUpTo: rv}) }

func healWatches(cluster string) { watchFaults.Delete(cluster) }

func countOf(counts *sync.Map, clusterResource string) int64 {
	if n, ok := counts.Load(clusterResource); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

func count(counts *sync.Map, cluster string, req *http.Request) {
	n, _ := counts.LoadOrStore(cluster+"/"+path.Base(req.URL.Path), &atomic.Int64{})
	n.(*atomic.Int64).Add(1)
}

// watchBroken reports whether the controller's watches to cluster are being refused.
func watchBroken(cluster string) bool {
	f, ok := watchFaults.Load(cluster)
	return ok && f.(watchFault).expiredUpTo == 0
}

// partitionable wraps the controller's transport to a target so a test can cut it off: new
// requests are refused, and open responses (watch streams) break at their next read, losing
// what they carried, as a dropped connection does. It also breaks or expires the watches alone
// (breakWatches, expireWatches).
func partitionable(cluster types.NamespacedName, rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if _, cut := partitioned.Load(cluster.Name); cut {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		}
		watch := req.URL.Query().Get("watch") != ""
		if _, hangs := hanging.Load(cluster.Name); hangs && req.Method == http.MethodPatch {
			// A target that answers reads but never answers writes: the request holds its
			// caller until the caller's context (the reconcile's timeout) gives up.
			n, _ := hungWrites.LoadOrStore(cluster.Name, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
			<-req.Context().Done()
			return nil, req.Context().Err()
		}
		if f, faulty := watchFaults.Load(cluster.Name); faulty && watch {
			rv, _ := strconv.ParseInt(req.URL.Query().Get("resourceVersion"), 10, 64)
			switch upTo := f.(watchFault).expiredUpTo; {
			case upTo == 0:
				count(&refusedWatches, cluster.Name, req)
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
			case rv > 0 && rv <= upTo:
				count(&expiredWatches, cluster.Name, req)
				return goneResponse(req), nil
			}
		}
		if !watch {
			sentRequests.Store(&sentRequest{cluster: cluster.Name, method: req.Method, path: req.URL.Path, at: time.Now()}, true)
		}
		resp, err := rt.RoundTrip(req)
		if resp != nil {
			body := &cuttableBody{ReadCloser: resp.Body, cluster: cluster.Name, watch: watch}
			if watch {
				openWatches.Store(body, cluster.Name)
			}
			resp.Body = body
		}
		return resp, err
	})
}

// hubHook, when set, sees every request the controllers send to the hub before it is sent.
var hubHook atomic.Pointer[func(*http.Request)]

// interceptHub wraps the controllers' transport to the hub so that a test can act in the middle
// of a reconcile (hubHook).
func interceptHub(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if hook := hubHook.Load(); hook != nil {
			(*hook)(req)
		}
		return rt.RoundTrip(req)
	})
}

// onHub sets hubHook for the rest of the test.
func onHub(t *testing.T, hook func(*http.Request)) {
	hubHook.Store(&hook)
	t.Cleanup(func() { hubHook.Store(nil) })
}

// sentRequest is a request other than a watch the controller sent to a target; sentRequests
// holds them all (*sentRequest keys).
type sentRequest struct {
	cluster, method, path string
	at                    time.Time
}

var sentRequests sync.Map

// requestsSince returns the requests other than watches the controller sent to cluster since t,
// as "METHOD path".
func requestsSince(cluster string, t time.Time) []string {
	var out []string
	sentRequests.Range(func(k, _ any) bool {
		if r := k.(*sentRequest); r.cluster == cluster && !r.at.Before(t) {
			out = append(out, r.method+" "+r.path)
		}
		return true
	})
	return out
}

// goneResponse is the API server's answer to a watch from a resourceVersion it no longer has.
func goneResponse(req *http.Request) *http.Response {
	const body = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
		`"message":"too old resource version","reason":"Expired","code":410}`
	return &http.Response{
		StatusCode: http.StatusGone, Status: "410 Gone", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: req,
	}
}

type cuttableBody struct {
	io.ReadCloser
	cluster string
	watch   bool
}

func (b *cuttableBody) Close() error {
	openWatches.Delete(b)
	return b.ReadCloser.Close()
}

func (b *cuttableBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if _, cut := partitioned.Load(b.cluster); cut || (b.watch && watchBroken(b.cluster)) {
		return 0, io.ErrUnexpectedEOF
	}
	return n, err
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// warningNotes returns the notes of the Warning Events with reason on a status object.
func warningNotes(g Gomega, statusName, reason string) []string {
	return eventNotes(g, statusName, reason, corev1.EventTypeWarning)
}

// eventNotes returns the notes of the Events of type eventType with reason about a status object.
func eventNotes(g Gomega, statusName, reason, eventType string) []string {
	events := &eventsv1.EventList{}
	g.Expect(hub.List(context.Background(), events, client.InNamespace(clusterNamespace))).To(Succeed())
	var notes []string
	for _, e := range events.Items {
		if e.Regarding.Name == statusName && e.Reason == reason && e.Type == eventType {
			notes = append(notes, e.Note)
		}
	}
	return notes
}

// Command deploy1000 measures a deployment of -objects (1,000) objects to each of -clusters (3)
// target clusters, and proves what a full reconcile with nothing changed costs. It starts a hub
// and the targets with internal/localfleet (without kube-controller-manager: nothing in the mix
// needs it, and it would only add CPU load on a small machine), creates one ServiceTemplate
// holding the objects inline and one MultiClusterService selecting every target, and runs the
// Holdfast controller (controller.NewManager) in this process. It reports
//
//   - the time from the MultiClusterService's creation until every ClusterServiceStatus is
//     Ready with all objects in sync, overall and per cluster;
//   - every request the controller sent to each target (and to the hub) during the deployment,
//     by verb, counted by wrapping the controller's HTTP transports (a watch is counted when it
//     is opened), with every mutating request (POST, PUT, PATCH, DELETE) listed by resource;
//   - the controller's Go heap in use (after a forced GC) and process RSS once the deployment
//     settled, each also minus a baseline taken before the manager was created, and the CPU time
//     of this process during the deployment;
//   - the size in bytes of a ClusterServiceStatus as the API server serves it (JSON), since it
//     holds the whole inventory and etcd refuses values over 1.5 MiB;
//   - then -reconciles (2) full reconciles with nothing changed, each requested with the
//     holdfast.dev/reconcile-requested-at annotation: time until every cluster reports it handled,
//     requests by verb and every mutating request, CPU time, and, as an independent check, how
//     many managed objects on the targets got a new resourceVersion. The Cluster controller's
//     health probe (GET /version and POST selfsubjectreviews, every 10s) goes through the same
//     transport, so a window may hold a probe: it is counted and listed like every request, and
//     only the verdict line tells a review (answered, never persisted) from a write.
//
// Windows: the deployment window opens when the MultiClusterService is created and closes once
// every cluster is Ready and no counted request was sent or answered for -quiet (2s). A
// no-change window opens when the annotation is set and closes once every cluster reports it
// handled and then -quiet passes without a request. Requests of this program's own hub client
// (creating objects, watching the status objects) and of its checks on the targets are not
// counted: they do not go through the controller's transports.
//
// Usage: go run ./bench/deploy1000
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/bench/internal/measure"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/sandbox"
)

const (
	templateNamespace = "bench"
	templateName      = "bulk"
	serviceSetName    = "bench-bulk"
	serviceName       = "bulk"
	targetNamespace   = "bench-target"
	// etcdLimit is etcd's default --max-request-bytes: a larger object cannot be stored.
	etcdLimit = 1572864
)

type config struct {
	objects, clusters, reconciles int
	quiet, timeout                time.Duration
}

func main() {
	var cfg config
	flag.IntVar(&cfg.objects, "objects", 1000, "objects deployed to each cluster (at least 10)")
	flag.IntVar(&cfg.clusters, "clusters", 3, "number of target clusters")
	flag.IntVar(&cfg.reconciles, "reconciles", 2, "full reconciles with nothing changed, one after another")
	flag.DurationVar(&cfg.quiet, "quiet", 2*time.Second, "a window closes once no counted request was sent or answered for this long")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "how long to wait for the deployment, and for each reconcile")
	flag.Parse()
	if cfg.objects < 10 || cfg.clusters < 1 {
		fmt.Fprintln(os.Stderr, "Error: -objects must be at least 10 and -clusters at least 1")
		os.Exit(2)
	}

	// Only errors: the controller's info logs would cost CPU in the measured windows.
	logger := zap.New(zap.Level(zapcore.ErrorLevel), zap.WriteTo(os.Stderr))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		stop()
		os.Exit(1)
	}
}

// bench holds what the measurements share.
type bench struct {
	cfg      config
	f        *localfleet.Fleet
	hub      client.Client     // this program's hub client: not counted
	watcher  client.WithWatch  // watches the status objects: not counted
	raw      rest.Interface    // reads objects as served, for their size
	targets  []client.Client   // direct, uncounted clients of the targets
	names    []string          // target names
	statuses map[string]string // status object name -> cluster
	counter  *measure.RequestCounter
	servers  []string // column order of request tables: targets, then the hub
	self     int
}

func run(ctx context.Context, cfg config) (retErr error) {
	if _, err := sandbox.BinaryDir(); err != nil {
		return err
	}
	fmt.Printf("Machine: %s\n\n", measure.Machine())
	b := &bench{cfg: cfg, counter: measure.NewRequestCounter(), self: os.Getpid(), statuses: map[string]string{}}
	results := measure.NewTable("measure", "value")

	fmt.Fprintf(os.Stderr, "Starting a hub and %d targets\n", cfg.clusters)
	began := time.Now()
	f, err := localfleet.Up(ctx, localfleet.Options{Clusters: cfg.clusters, NoControllerManager: true})
	if err != nil {
		return fmt.Errorf("starting the fleet: %w", err)
	}
	defer func() { retErr = errors.Join(retErr, f.Stop()) }()
	b.f = f
	results.Row(fmt.Sprintf("fleet start (hub + %d targets in parallel, without kube-controller-manager, CRDs, registration)", cfg.clusters), measure.Seconds(time.Since(began)))
	fmt.Fprintf(os.Stderr, "Fleet up in %s, load average %s\n", time.Since(began).Round(time.Millisecond), measure.LoadAverage())
	if err := b.clients(); err != nil {
		return err
	}

	m := mixOf(cfg.objects)
	yaml := manifests(m, targetNamespace)
	if err := b.createTemplate(ctx, yaml); err != nil {
		return err
	}
	tplSize, err := b.rawSize(ctx, "/apis/"+holdfastv1.GroupVersion.String()+"/namespaces/"+templateNamespace+"/servicetemplates/"+templateName)
	if err != nil {
		return err
	}
	results.Row("objects per cluster", fmt.Sprintf("%d (%s)", m.total(), m))
	results.Row("ServiceTemplate size as served (JSON; inline YAML)", fmt.Sprintf("%d bytes (%d bytes of YAML)", tplSize, len(yaml)))

	baseHeap, baseRSS, err := selfMemory(b.self)
	if err != nil {
		return err
	}
	results.Row("baseline before the manager: Go heap in use", measure.MiB(baseHeap))
	results.Row("baseline before the manager: process RSS", measure.MiB(baseRSS))
	if peak, err := measure.PeakRSS(b.self); err == nil {
		results.Row("baseline before the manager: peak process RSS so far (VmHWM)", measure.MiB(peak))
	}

	hubCfg := rest.CopyConfig(f.Hub.RESTConfig())
	hubCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return b.counter.Wrap("hub", rt) })
	mgr, _, err := controller.NewManager(ctx, hubCfg, controller.Options{
		MetricsAddr: "0", HealthAddr: "0",
		TargetTransport: func(cluster types.NamespacedName, rt http.RoundTripper) http.RoundTripper {
			return b.counter.Wrap(cluster.Name, rt)
		},
	})
	if err != nil {
		return err
	}
	mgrCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	started := time.Now()
	go func() { done <- mgr.Start(mgrCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			retErr = errors.Join(retErr, fmt.Errorf("running the controller: %w", err))
		}
	}()
	if err := b.waitClustersReady(ctx, cfg.timeout); err != nil {
		return err
	}
	results.Row(fmt.Sprintf("manager start until all %d Clusters Ready", cfg.clusters), measure.Seconds(time.Since(started)))
	if !b.counter.WaitQuiet(cfg.quiet, time.Minute) {
		fmt.Fprintln(os.Stderr, "Warning: the controller did not go quiet before the deployment")
	}

	// Deployment.
	fmt.Fprintf(os.Stderr, "Clusters Ready; deploying %d objects to %d clusters\n", m.total(), cfg.clusters)
	b.counter.Reset()
	cpu0, err := measure.CPUTime(b.self)
	if err != nil {
		return err
	}
	targetCPU0 := b.targetsCPU()
	created := time.Now()
	if err := b.createServiceSet(ctx); err != nil {
		return err
	}
	readyAt, err := b.waitStatuses(ctx, cfg.timeout, func(css *holdfastv1.ClusterServiceStatus) bool {
		return meta.IsStatusConditionTrue(css.Status.Conditions, holdfastv1.ReadyCondition) &&
			int(css.Status.ResourceCount) == m.total() && int(css.Status.InSyncCount) == m.total()
	})
	if err != nil {
		return fmt.Errorf("waiting for the deployment: %w", err)
	}
	allReady := time.Since(created)
	cpu1, err := measure.CPUTime(b.self)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "All Ready after %s; waiting for %s without requests\n", allReady.Round(time.Millisecond), cfg.quiet)
	quiet := b.counter.WaitQuiet(cfg.quiet, time.Minute)
	settled := time.Since(created)
	cpu2, err := measure.CPUTime(b.self)
	if err != nil {
		return err
	}
	targetCPU := b.targetsCPU() - targetCPU0
	deployCounts := b.counter.Reset()

	results.Row(fmt.Sprintf("MultiClusterService created until all %d ClusterServiceStatuses Ready with %d of %d in sync", cfg.clusters, m.total(), m.total()), measure.Seconds(allReady))
	for _, name := range b.names {
		results.Row(fmt.Sprintf("… %s Ready", name), measure.Seconds(readyAt[name].Sub(created)))
	}
	results.Row("deployment window (until all Ready, then "+cfg.quiet.String()+" without requests)", measure.Seconds(settled)+quietNote(quiet))
	results.Row("CPU time (user+sys) of this process, creation until all Ready", fmt.Sprintf("%s (%.0f%% of one core)", measure.Seconds(cpu1-cpu0), 100*(cpu1-cpu0).Seconds()/allReady.Seconds()))
	results.Row("CPU time (user+sys) of this process, whole deployment window", measure.Seconds(cpu2-cpu0))
	results.Row(fmt.Sprintf("CPU time of the %d targets' etcd + kube-apiserver, whole deployment window", cfg.clusters), measure.Seconds(targetCPU))

	heap, rss, err := selfMemory(b.self)
	if err != nil {
		return err
	}
	results.Row("after the deployment: Go heap in use", measure.MiB(heap))
	results.Row("after the deployment: Go heap in use minus baseline", measure.MiB(heap-baseHeap))
	results.Row("after the deployment: process RSS", measure.MiB(rss))
	results.Row("after the deployment: process RSS minus baseline", measure.MiB(rss-baseRSS))
	if peak, err := measure.PeakRSS(b.self); err == nil {
		results.Row("after the deployment: peak process RSS so far (VmHWM)", measure.MiB(peak))
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	results.Row("after the deployment: Go heap held from the OS (HeapSys − HeapReleased)", measure.MiB(int64(ms.HeapSys-ms.HeapReleased)))
	results.Row("after the deployment: goroutines", fmt.Sprint(runtime.NumGoroutine()))

	sizes, err := b.statusSizes(ctx)
	if err != nil {
		return err
	}
	results.Row("ClusterServiceStatus size as served (JSON), largest of "+fmt.Sprint(cfg.clusters), fmt.Sprintf("%d bytes (%.1f%% of etcd's 1.5 MiB limit)", sizes.object, 100*float64(sizes.object)/etcdLimit))
	results.Row("… of which status.resources", fmt.Sprintf("%d bytes, %d entries, %.0f bytes per entry", sizes.resources, sizes.entries, float64(sizes.resources)/float64(max(sizes.entries, 1))))
	results.Row("… of which metadata.managedFields", fmt.Sprintf("%d bytes", sizes.managedFields))
	results.Row("… one status.resources entry", "`"+sizes.example+"`")
	if sizes.entries > 0 {
		perEntry := float64(sizes.resources) / float64(sizes.entries)
		results.Row("objects per cluster at which the status object would reach 1.5 MiB (linear estimate)", fmt.Sprintf("about %d", int(float64(etcdLimit-(sizes.object-sizes.resources))/perEntry)))
	}
	results.Row("status.syncMode", sizes.syncMode)

	fmt.Println("#### Deployment")
	fmt.Println()
	fmt.Println(results)
	fmt.Printf("Requests during the deployment window (%s), by verb:\n\n", measure.Seconds(settled))
	fmt.Println(deployCounts.Table(b.servers...))
	fmt.Println("Gets and writes to the targets during the deployment window, by resource: count, time from first to last, rate:")
	fmt.Println()
	fmt.Println(deployCounts.RateTable(b.names...))
	fmt.Println("Mutating requests during the deployment window, grouped:")
	fmt.Println()
	fmt.Println(deployCounts.MutatingTable())

	var failures []string
	for i := 1; i <= cfg.reconciles; i++ {
		ok, err := b.noChangeReconcile(ctx, i, m.total())
		if err != nil {
			return err
		}
		if !ok {
			failures = append(failures, fmt.Sprintf("reconcile %d", i))
		}
	}
	if len(failures) > 0 {
		fmt.Printf("**Not zero writes**: %s sent mutating requests other than reviews to a target, or changed a managed object (listed above).\n", strings.Join(failures, ", "))
	} else {
		fmt.Printf("Every full reconcile with nothing changed (%d) sent no write to any target and changed no managed object's resourceVersion.\n", cfg.reconciles)
	}
	return nil
}

func quietNote(quiet bool) string {
	if quiet {
		return ""
	}
	return " (never quiet: closed after 1 minute)"
}

// clients builds this program's own, uncounted clients.
func (b *bench) clients() error {
	scheme, err := controller.Scheme()
	if err != nil {
		return err
	}
	b.hub = b.f.HubClient()
	if b.watcher, err = client.NewWithWatch(b.f.Hub.RESTConfig(), client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("building the hub watch client: %w", err)
	}
	cs, err := kubernetes.NewForConfig(b.f.Hub.RESTConfig())
	if err != nil {
		return fmt.Errorf("building the hub clientset: %w", err)
	}
	b.raw = cs.Discovery().RESTClient()
	for _, t := range b.f.Targets {
		c, err := client.New(t.RESTConfig(), client.Options{Scheme: scheme})
		if err != nil {
			return fmt.Errorf("building a client of %s: %w", t.Name(), err)
		}
		b.targets = append(b.targets, c)
		b.names = append(b.names, t.Name())
		b.statuses[naming.StatusName(serviceSetName, t.Name())] = t.Name()
	}
	b.servers = append(slices.Clone(b.names), "hub")
	return nil
}

func (b *bench) createTemplate(ctx context.Context, yaml string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: templateNamespace}}
	if err := b.hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", templateNamespace, err)
	}
	tpl := &holdfastv1.ServiceTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: templateName},
		Spec:       holdfastv1.ServiceTemplateSpec{Inline: yaml},
	}
	if err := b.hub.Create(ctx, tpl); err != nil {
		return fmt.Errorf("creating ServiceTemplate %s/%s: %w", templateNamespace, templateName, err)
	}
	return nil
}

func (b *bench) createServiceSet(ctx context.Context) error {
	mcs := &holdfastv1.MultiClusterService{
		ObjectMeta: metav1.ObjectMeta{Name: serviceSetName},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "sandbox"}}},
			Services: []holdfastv1.Service{{
				Name:      serviceName,
				Template:  holdfastv1.TemplateReference{Name: templateName, Namespace: templateNamespace},
				Namespace: targetNamespace,
			}},
		},
	}
	if err := b.hub.Create(ctx, mcs); err != nil {
		return fmt.Errorf("creating MultiClusterService %s: %w", serviceSetName, err)
	}
	return nil
}

// noChangeReconcile requests a full reconcile with nothing changed and reports what it cost. It
// returns false if any target received a mutating request or any managed object changed.
func (b *bench) noChangeReconcile(ctx context.Context, i, objects int) (bool, error) {
	results := measure.NewTable("measure", "value")
	before, err := b.resourceVersions(ctx)
	if err != nil {
		return false, err
	}
	lastFull, err := b.lastFullReconcile(ctx)
	if err != nil {
		return false, err
	}
	if !b.counter.WaitQuiet(b.cfg.quiet, time.Minute) {
		fmt.Fprintln(os.Stderr, "Warning: the controller did not go quiet before the reconcile")
	}
	token := fmt.Sprintf("deploy1000-%d-%d", i, time.Now().UnixNano())
	fmt.Fprintf(os.Stderr, "Full reconcile %d with nothing changed (%s)\n", i, token)
	b.counter.Reset()
	cpu0, err := measure.CPUTime(b.self)
	if err != nil {
		return false, err
	}
	targetCPU0 := b.targetsCPU()
	requested := time.Now()
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, holdfastv1.ReconcileRequestedAtAnnotation, token))
	if err := b.hub.Patch(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: serviceSetName}}, patch); err != nil {
		return false, fmt.Errorf("requesting a reconcile: %w", err)
	}
	handledAt, err := b.waitStatuses(ctx, b.cfg.timeout, func(css *holdfastv1.ClusterServiceStatus) bool {
		return css.Status.LastHandledReconcileAt == token
	})
	if err != nil {
		return false, fmt.Errorf("waiting for reconcile %d: %w", i, err)
	}
	allHandled := time.Since(requested)
	quiet := b.counter.WaitQuiet(b.cfg.quiet, time.Minute)
	window := time.Since(requested)
	cpu1, err := measure.CPUTime(b.self)
	if err != nil {
		return false, err
	}
	targetCPU := b.targetsCPU() - targetCPU0
	counts := b.counter.Reset()

	after, err := b.resourceVersions(ctx)
	if err != nil {
		return false, err
	}
	lastFullAfter, err := b.lastFullReconcile(ctx)
	if err != nil {
		return false, err
	}
	states, err := b.statesSummary(ctx, objects)
	if err != nil {
		return false, err
	}

	results.Row(fmt.Sprintf("annotation set until all %d report it handled (status.lastHandledReconcileAt)", b.cfg.clusters), measure.Seconds(allHandled))
	for _, name := range b.names {
		results.Row(fmt.Sprintf("… %s handled", name), measure.Seconds(handledAt[name].Sub(requested)))
	}
	results.Row("window (until all handled, then "+b.cfg.quiet.String()+" without requests)", measure.Seconds(window)+quietNote(quiet))
	advanced := 0
	for name, t := range lastFullAfter {
		if t.After(lastFull[name]) {
			advanced++
		}
	}
	results.Row("status.lastFullReconcileTime advanced (a full reconcile ran)", fmt.Sprintf("%d of %d", advanced, b.cfg.clusters))
	results.Row("status after the reconcile", states)
	results.Row("CPU time (user+sys) of this process during the window", fmt.Sprintf("%s (%.0f%% of one core)", measure.Seconds(cpu1-cpu0), 100*(cpu1-cpu0).Seconds()/window.Seconds()))
	results.Row(fmt.Sprintf("CPU time of the %d targets' etcd + kube-apiserver during the window", b.cfg.clusters), measure.Seconds(targetCPU))
	changed := 0
	var changedEx []string
	for obj, rv := range before {
		if after[obj] != rv {
			changed++
			if len(changedEx) < 5 {
				changedEx = append(changedEx, obj)
			}
		}
	}
	slices.Sort(changedEx)
	results.Row(fmt.Sprintf("managed objects on the targets with a new resourceVersion (of %d)", len(before)), fmt.Sprint(changed)+exampleNote(changedEx))
	targetMutating, targetReviews := 0, 0
	for _, name := range b.names {
		for _, r := range counts.MutatingTo(name) {
			targetMutating++
			if r.Review() {
				targetReviews++
			}
		}
	}
	results.Row("mutating requests (POST/PUT/PATCH/DELETE) to the targets", fmt.Sprint(targetMutating))
	results.Row("… of which reviews (POST *reviews: answered, never persisted)", fmt.Sprint(targetReviews))
	results.Row("… other mutating requests to the targets (writes)", fmt.Sprint(targetMutating-targetReviews))

	fmt.Printf("#### Full reconcile %d with nothing changed\n\n", i)
	fmt.Println(results)
	fmt.Printf("Requests during the window (%s), by verb:\n\n", measure.Seconds(window))
	fmt.Println(counts.Table(b.servers...))
	if len(counts.Mutating) == 0 {
		fmt.Println("Mutating requests during the window: none.")
		fmt.Println()
	} else {
		fmt.Println("Mutating requests during the window, grouped:")
		fmt.Println()
		fmt.Println(counts.MutatingTable())
	}
	return targetMutating-targetReviews == 0 && changed == 0, nil
}

func exampleNote(ex []string) string {
	if len(ex) == 0 {
		return ""
	}
	return " (e.g. " + strings.Join(ex, ", ") + ")"
}

// waitStatuses watches the status objects until ok holds for every cluster's, and returns when
// it first held for each. It keeps no status object, so that the controller's memory is not
// inflated by this program's.
func (b *bench) waitStatuses(ctx context.Context, timeout time.Duration, ok func(*holdfastv1.ClusterServiceStatus) bool) (map[string]time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	at := map[string]time.Time{}
	last := map[string]string{}
	see := func(css *holdfastv1.ClusterServiceStatus) {
		cluster, mine := b.statuses[css.Name]
		if !mine {
			return
		}
		if _, done := at[cluster]; !done && ok(css) {
			at[cluster] = time.Now()
		}
		last[cluster] = describe(css)
	}
	for len(at) < len(b.names) {
		list := &holdfastv1.ClusterServiceStatusList{}
		if err := b.watcher.List(ctx, list, client.InNamespace(b.f.Namespace)); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%d of %d done (%v): %w", len(at), len(b.names), last, err)
			}
			time.Sleep(time.Second)
			continue
		}
		for i := range list.Items {
			see(&list.Items[i])
		}
		rv := list.ResourceVersion
		list = nil
		if len(at) == len(b.names) {
			break
		}
		w, err := b.watcher.Watch(ctx, &holdfastv1.ClusterServiceStatusList{}, client.InNamespace(b.f.Namespace),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%d of %d done (%v): %w", len(at), len(b.names), last, err)
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
			if len(at) == len(b.names) {
				break
			}
		}
		w.Stop()
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%d of %d done (last seen: %v): %w", len(at), len(b.names), last, err)
		}
	}
	return at, nil
}

// describe summarises a status object for a timeout message.
func describe(css *holdfastv1.ClusterServiceStatus) string {
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

type statusSize struct {
	object, resources, managedFields, entries int
	syncMode, example                         string
}

// statusSizes reads every status object as the API server serves it and returns the largest.
func (b *bench) statusSizes(ctx context.Context) (statusSize, error) {
	var largest statusSize
	for name := range b.statuses {
		body, err := b.rawBytes(ctx, "/apis/"+holdfastv1.GroupVersion.String()+"/namespaces/"+b.f.Namespace+"/clusterservicestatuses/"+name)
		if err != nil {
			return largest, err
		}
		var obj struct {
			Metadata struct {
				ManagedFields json.RawMessage `json:"managedFields"`
			} `json:"metadata"`
			Status struct {
				Resources []json.RawMessage `json:"resources"`
				SyncMode  string            `json:"syncMode"`
			} `json:"status"`
		}
		if err := json.Unmarshal(body, &obj); err != nil {
			return largest, fmt.Errorf("decoding ClusterServiceStatus %s: %w", name, err)
		}
		res, err := json.Marshal(obj.Status.Resources)
		if err != nil {
			return largest, err
		}
		s := statusSize{object: len(body), resources: len(res), managedFields: len(obj.Metadata.ManagedFields), entries: len(obj.Status.Resources), syncMode: obj.Status.SyncMode}
		if len(obj.Status.Resources) > 1 {
			s.example = string(obj.Status.Resources[1])
		}
		if s.object > largest.object {
			largest = s
		}
	}
	return largest, nil
}

func (b *bench) rawBytes(ctx context.Context, path string) ([]byte, error) {
	body, err := b.raw.Get().AbsPath(path).SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return body, nil
}

func (b *bench) rawSize(ctx context.Context, path string) (int, error) {
	body, err := b.rawBytes(ctx, path)
	return len(body), err
}

// lastFullReconcile returns each cluster's status.lastFullReconcileTime.
func (b *bench) lastFullReconcile(ctx context.Context) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	for name, cluster := range b.statuses {
		css := &holdfastv1.ClusterServiceStatus{}
		if err := b.hub.Get(ctx, client.ObjectKey{Namespace: b.f.Namespace, Name: name}, css); err != nil {
			return nil, fmt.Errorf("reading ClusterServiceStatus %s: %w", name, err)
		}
		if t := css.Status.LastFullReconcileTime; t != nil {
			out[cluster] = t.Time
		}
	}
	return out, nil
}

// statesSummary checks every status object is still Ready with every object in sync.
func (b *bench) statesSummary(ctx context.Context, objects int) (string, error) {
	good := 0
	var bad []string
	for name, cluster := range b.statuses {
		css := &holdfastv1.ClusterServiceStatus{}
		if err := b.hub.Get(ctx, client.ObjectKey{Namespace: b.f.Namespace, Name: name}, css); err != nil {
			return "", fmt.Errorf("reading ClusterServiceStatus %s: %w", name, err)
		}
		if meta.IsStatusConditionTrue(css.Status.Conditions, holdfastv1.ReadyCondition) && int(css.Status.InSyncCount) == objects && int(css.Status.ResourceCount) == objects {
			good++
		} else {
			bad = append(bad, cluster+": "+describe(css))
		}
	}
	s := fmt.Sprintf("%d of %d Ready with %d of %d in sync", good, len(b.statuses), objects, objects)
	if len(bad) > 0 {
		s += "; " + strings.Join(bad, "; ")
	}
	return s, nil
}

// managedKinds are the kinds the template declares.
var managedKinds = []metav1.GroupVersionKind{
	{Version: "v1", Kind: "Namespace"}, {Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "Service"}, {Version: "v1", Kind: "ServiceAccount"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}, {Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
}

// resourceVersions lists the metadata of every Holdfast-managed object on every target, through
// uncounted clients, keyed "cluster kind namespace/name".
func (b *bench) resourceVersions(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	for i, c := range b.targets {
		for _, gvk := range managedKinds {
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(gvkOf(gvk, gvk.Kind+"List"))
			if err := c.List(ctx, list, client.MatchingLabels{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue}); err != nil {
				return nil, fmt.Errorf("listing %ss on %s: %w", gvk.Kind, b.names[i], err)
			}
			for _, o := range list.Items {
				out[fmt.Sprintf("%s %s %s/%s", b.names[i], gvk.Kind, o.Namespace, o.Name)] = o.ResourceVersion
			}
		}
	}
	return out, nil
}

// targetsCPU is the CPU time the targets' control-plane processes used so far.
func (b *bench) targetsCPU() time.Duration {
	var sum time.Duration
	for _, t := range b.f.Targets {
		for _, pid := range t.PIDs() {
			if d, err := measure.CPUTime(pid); err == nil {
				sum += d
			}
		}
	}
	return sum
}

// waitClustersReady polls the hub until every Cluster is Ready.
func (b *bench) waitClustersReady(ctx context.Context, timeout time.Duration) error {
	ready := 0
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		clusters, err := b.f.Clusters(ctx)
		if err != nil {
			return false, nil //nolint:nilerr // a busy hub is retried until the timeout
		}
		ready = 0
		for i := range clusters {
			if meta.IsStatusConditionTrue(clusters[i].Status.Conditions, holdfastv1.ReadyCondition) {
				ready++
			}
		}
		return ready == len(b.names), nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d Clusters Ready: %w", ready, len(b.names), err)
	}
	return nil
}

// selfMemory returns the Go heap in use after a forced collection, and the process RSS.
func selfMemory(pid int) (heapInuse, rss int64, err error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, err = measure.RSS(pid)
	return int64(ms.HeapInuse), rss, err
}

func gvkOf(g metav1.GroupVersionKind, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: g.Group, Version: g.Version, Kind: kind}
}

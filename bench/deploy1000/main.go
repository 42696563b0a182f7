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
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/naming"
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
	measure.ParseFlags(measure.AtLeast("objects", 10), measure.AtLeast("clusters", 1))

	measure.Main(func(ctx context.Context) error { return run(ctx, cfg) })
}

// bench holds what the measurements share.
type bench struct {
	*measure.Harness
	cfg  config
	self int
}

func run(ctx context.Context, cfg config) (retErr error) {
	results := measure.NewTable("measure", "value")
	b := &bench{cfg: cfg, self: os.Getpid()}
	m := measure.MixOf(cfg.objects)
	// The template, then the baseline, before the manager.
	var baseHeap, baseRSS int64
	before := func(h *measure.Harness) error {
		b.Harness = h
		results.Row(fmt.Sprintf("fleet start (hub + %d targets in parallel, without kube-controller-manager, CRDs, registration)", cfg.clusters), measure.Seconds(h.FleetUp))
		yaml := m.Manifests(targetNamespace)
		if err := b.CreateTemplate(ctx, templateNamespace, templateName, yaml); err != nil {
			return err
		}
		tplSize, err := b.rawSize(ctx, "/apis/"+holdfastv1.GroupVersion.String()+"/namespaces/"+templateNamespace+"/servicetemplates/"+templateName)
		if err != nil {
			return err
		}
		results.Row("objects per cluster", fmt.Sprintf("%d (%s)", m.Total(), m))
		results.Row("ServiceTemplate size as served (JSON; inline YAML)", fmt.Sprintf("%d bytes (%d bytes of YAML)", tplSize, len(yaml)))
		if baseHeap, baseRSS, err = measure.SelfMemory(); err != nil {
			return err
		}
		results.Row("baseline before the manager: Go heap in use", measure.MiB(baseHeap))
		results.Row("baseline before the manager: process RSS", measure.MiB(baseRSS))
		if peak, err := measure.PeakRSS(b.self); err == nil {
			results.Row("baseline before the manager: peak process RSS so far (VmHWM)", measure.MiB(peak))
		}
		return nil
	}
	h, err := measure.Start(ctx, measure.Setup{FleetOptions: measure.FleetOptions{Clusters: cfg.clusters}, ReadyTimeout: cfg.timeout, BeforeController: before})
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, h.Stop()) }()
	b.ExpectServiceSet(serviceSetName)
	results.Row(fmt.Sprintf("manager start until all %d Clusters Ready", cfg.clusters), measure.Seconds(time.Since(b.Started)))
	if !b.Counter.WaitQuiet(cfg.quiet, time.Minute) {
		fmt.Fprintln(os.Stderr, "Warning: the controller did not go quiet before the deployment")
	}

	// Deployment.
	fmt.Fprintf(os.Stderr, "Clusters Ready; deploying %d objects to %d clusters\n", m.Total(), cfg.clusters)
	b.Counter.Reset()
	cpu0, err := measure.CPUTime(b.self)
	if err != nil {
		return err
	}
	targetCPU0 := b.TargetsCPU()
	created := time.Now()
	if err := b.CreateServiceSet(ctx, serviceSetName, "", serviceName,
		holdfastv1.TemplateReference{Name: templateName, Namespace: templateNamespace}, targetNamespace); err != nil {
		return err
	}
	readyAt, err := b.WaitStatuses(ctx, cfg.timeout, measure.ReadyInSync(m.Total()))
	if err != nil {
		return fmt.Errorf("waiting for the deployment: %w", err)
	}
	allReady := time.Since(created)
	cpu1, err := measure.CPUTime(b.self)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "All Ready after %s; waiting for %s without requests\n", allReady.Round(time.Millisecond), cfg.quiet)
	quiet := b.Counter.WaitQuiet(cfg.quiet, time.Minute)
	settled := time.Since(created)
	cpu2, err := measure.CPUTime(b.self)
	if err != nil {
		return err
	}
	targetCPU := b.TargetsCPU() - targetCPU0
	deployCounts := b.Counter.Reset()

	results.Row(fmt.Sprintf("MultiClusterService created until all %d ClusterServiceStatuses Ready with %d of %d in sync", cfg.clusters, m.Total(), m.Total()), measure.Seconds(allReady))
	for _, name := range b.Names {
		results.Row(fmt.Sprintf("… %s Ready", name), measure.Seconds(readyAt[naming.StatusName(serviceSetName, name)].Sub(created)))
	}
	results.Row("deployment window (until all Ready, then "+cfg.quiet.String()+" without requests)", measure.Seconds(settled)+quietNote(quiet))
	results.Row("CPU time (user+sys) of this process, creation until all Ready", fmt.Sprintf("%s (%.0f%% of one core)", measure.Seconds(cpu1-cpu0), 100*(cpu1-cpu0).Seconds()/allReady.Seconds()))
	results.Row("CPU time (user+sys) of this process, whole deployment window", measure.Seconds(cpu2-cpu0))
	results.Row(fmt.Sprintf("CPU time of the %d targets' etcd + kube-apiserver, whole deployment window", cfg.clusters), measure.Seconds(targetCPU))

	heap, rss, err := measure.SelfMemory()
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
	fmt.Println(deployCounts.Table(b.Servers...))
	fmt.Println("Gets and writes to the targets during the deployment window, by resource: count, time from first to last, rate:")
	fmt.Println()
	fmt.Println(deployCounts.RateTable(b.Names...))
	fmt.Println("Mutating requests during the deployment window, grouped:")
	fmt.Println()
	fmt.Println(deployCounts.MutatingTable())

	var failures []string
	for i := 1; i <= cfg.reconciles; i++ {
		ok, err := b.noChangeReconcile(ctx, i, m.Total())
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
	if !b.Counter.WaitQuiet(b.cfg.quiet, time.Minute) {
		fmt.Fprintln(os.Stderr, "Warning: the controller did not go quiet before the reconcile")
	}
	token := fmt.Sprintf("deploy1000-%d-%d", i, time.Now().UnixNano())
	fmt.Fprintf(os.Stderr, "Full reconcile %d with nothing changed (%s)\n", i, token)
	b.Counter.Reset()
	cpu0, err := measure.CPUTime(b.self)
	if err != nil {
		return false, err
	}
	targetCPU0 := b.TargetsCPU()
	requested := time.Now()
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, holdfastv1.ReconcileRequestedAtAnnotation, token))
	if err := b.Hub.Patch(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: serviceSetName}}, patch); err != nil {
		return false, fmt.Errorf("requesting a reconcile: %w", err)
	}
	handledAt, err := b.WaitStatuses(ctx, b.cfg.timeout, func(css *holdfastv1.ClusterServiceStatus) bool {
		return css.Status.LastHandledReconcileAt == token
	})
	if err != nil {
		return false, fmt.Errorf("waiting for reconcile %d: %w", i, err)
	}
	allHandled := time.Since(requested)
	quiet := b.Counter.WaitQuiet(b.cfg.quiet, time.Minute)
	window := time.Since(requested)
	cpu1, err := measure.CPUTime(b.self)
	if err != nil {
		return false, err
	}
	targetCPU := b.TargetsCPU() - targetCPU0
	counts := b.Counter.Reset()

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
	for _, name := range b.Names {
		results.Row(fmt.Sprintf("… %s handled", name), measure.Seconds(handledAt[naming.StatusName(serviceSetName, name)].Sub(requested)))
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
	for _, name := range b.Names {
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
	fmt.Println(counts.Table(b.Servers...))
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

type statusSize struct {
	object, resources, managedFields, entries int
	syncMode, example                         string
}

// statusSizes reads every status object as the API server serves it and returns the largest.
func (b *bench) statusSizes(ctx context.Context) (statusSize, error) {
	var largest statusSize
	for name := range b.Statuses {
		body, err := b.rawBytes(ctx, "/apis/"+holdfastv1.GroupVersion.String()+"/namespaces/"+b.Fleet.Namespace+"/clusterservicestatuses/"+name)
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
	body, err := b.Raw.Get().AbsPath(path).SetHeader("Accept", "application/json").DoRaw(ctx)
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
	for name, cluster := range b.Statuses {
		css := &holdfastv1.ClusterServiceStatus{}
		if err := b.Hub.Get(ctx, client.ObjectKey{Namespace: b.Fleet.Namespace, Name: name}, css); err != nil {
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
	for name, cluster := range b.Statuses {
		css := &holdfastv1.ClusterServiceStatus{}
		if err := b.Hub.Get(ctx, client.ObjectKey{Namespace: b.Fleet.Namespace, Name: name}, css); err != nil {
			return "", fmt.Errorf("reading ClusterServiceStatus %s: %w", name, err)
		}
		if meta.IsStatusConditionTrue(css.Status.Conditions, holdfastv1.ReadyCondition) && int(css.Status.InSyncCount) == objects && int(css.Status.ResourceCount) == objects {
			good++
		} else {
			bad = append(bad, cluster+": "+measure.DescribeStatus(css))
		}
	}
	s := fmt.Sprintf("%d of %d Ready with %d of %d in sync", good, len(b.Statuses), objects, objects)
	if len(bad) > 0 {
		s += "; " + strings.Join(bad, "; ")
	}
	return s, nil
}

// resourceVersions lists the metadata of every Holdfast-managed object on every target, through
// uncounted clients, keyed "cluster kind namespace/name".
func (b *bench) resourceVersions(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	for i, c := range b.Targets {
		for _, gvk := range measure.MixKinds {
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(gvkOf(gvk, gvk.Kind+"List"))
			if err := c.List(ctx, list, client.MatchingLabels{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue}); err != nil {
				return nil, fmt.Errorf("listing %ss on %s: %w", gvk.Kind, b.Names[i], err)
			}
			for _, o := range list.Items {
				out[fmt.Sprintf("%s %s %s/%s", b.Names[i], gvk.Kind, o.Namespace, o.Name)] = o.ResourceVersion
			}
		}
	}
	return out, nil
}

func gvkOf(g metav1.GroupVersionKind, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: g.Group, Version: g.Version, Kind: kind}
}

// Command inventory measures whether correcting one drifted object costs the same whatever the
// number of objects in its service set (issue 11, behaviour 6: with 1,000 objects in one service
// set an edit of one object was corrected in p50 330 ms, about 25 ms with a handful; the goal is
// a correction p50 at 1,000 and 5,000 objects within 2× of the small inventory's). It starts a
// hub and one target WITH kube-controller-manager (internal/localfleet, through measure.Harness)
// and the Holdfast controller (controller.NewManager) in this process. Then, for each size n of
// -sizes (10,1000,5000), smallest first:
//
//   - it creates n ConfigMaps with small data (a key "value", which the benchmark edits, and one
//     more) declared into a namespace of their own, bench-inv-<n>, in inline ServiceTemplates of
//     at most chunkSize (5,000) ConfigMaps each, inv-<n>-0, inv-<n>-1, … (an inline template of
//     5,000 is near the API server's request limit, and one render may yield at most 10,000
//     objects; the first template declares the Namespace too: n+1 objects), and a
//     MultiClusterService in ContinuousWithDriftDetection mode with one service per template,
//     inventory-0, inventory-1, …, and waits until its status object is Ready with every object
//     in sync. The service set's fight limit (spec.drift.fight.maxCorrections)
//     is 1,000, the most allowed: with the default, 5 corrections of one object within 10
//     minutes, a small set's objects would become Contested after a few edits each and no longer
//     be corrected;
//   - it deploys the same n ConfigMaps into bench-ideal-<n> through an ideal corrector running
//     in this process: one watch of the ConfigMaps labelled as the ideal's (a client-go
//     informer) and, for each change that leaves an object's data other than declared, one
//     forced server-side apply of the declared object (field manager "ideal"), nothing else. It
//     runs against the same API server in the same minutes, so Holdfast's latency can be read as
//     a ratio to it: the machine is shared and noisy, and the ideal shows what the API server,
//     the watch delivery and this program cost;
//   - after -settle (5s) and once the controller sent no request for a second, it performs
//     -edits (40) rounds of one out-of-band edit each of the two: an Update (as field manager
//     bench-editor) of data.value of one ConfigMap, the same one in both namespaces, first
//     Holdfast's, then the ideal's; the ConfigMaps are taken in a random order (-seed), all of
//     them before any again, so none is edited more than ceil(edits / n) times. Each edit waits
//     for its correction: t0 is when the Update returned, the correction when this program's own
//     watch on the target (an informer of every ConfigMap either corrector manages, separate from
//     both) first sees the object back at its declared data with a newer resourceVersion (this
//     can come before this program has read the Update's response: a latency slightly below
//     zero is possible, as for bench/drift's detection). After a Holdfast correction it also
//     waits until the controller sent no request for -quiet (250ms) — the rest of its reconcile,
//     e.g. the status patch, is not left to delay the next edit — and reports that tail; then
//     -gap (150ms) before the next edit;
//   - every request the controller sent to the target and to the hub during the edits is counted
//     (its HTTP transports are wrapped, as in bench/drift), with the bytes of the request bodies
//     and of the response bodies read, per verb, and divided by the number of corrections: a
//     correction that lists, applies or rewrites the whole inventory shows there, and so does a
//     GET of a status object holding it (bytes read from the hub);
//   - finally it deletes the MultiClusterService and waits until it is gone (the controller
//     removes its finalizer once everything is withdrawn), deletes the templates and the ideal's
//     namespace, and waits until both namespaces are gone from the target, so that the next size
//     starts from an empty target.
//
// It prints, per size, the correction latency of both correctors (n, min, p50, p90, p99, max),
// the ratio of each p50 to the smallest size's and of Holdfast's p50 to the ideal's, and the
// controller's requests per correction; then a summary and the goal lines ("p50 at 1000 within
// 2× of p50 at 10: met/not met"), each also read against the ideal (Holdfast's p50 over the
// ideal's, at that size and at the smallest).
//
// Usage: go run ./bench/inventory [-sizes 10,1000,5000] [-edits 40]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/naming"
)

const (
	templateNamespace = "bench"
	editor            = "bench-editor"
	// chunkSize is the most ConfigMaps one ServiceTemplate (and so one service) declares: an
	// inline template of 5,000 is about 900 KiB as served, of a request limit of 3 MiB and
	// etcd's 1.5 MiB, and one render may yield at most render.DefaultMaxObjects (10,000).
	chunkSize = 5000
	// goalFactor is the goal: the p50 at every larger size within this factor of the smallest's.
	goalFactor = 2
)

// sizeList is the -sizes flag: distinct sizes, kept in ascending order.
type sizeList []int

func (s *sizeList) String() string {
	if s == nil {
		return ""
	}
	var parts []string
	for _, n := range *s {
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, ",")
}

func (s *sizeList) Set(v string) error {
	var out []int
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("%q is not a number", f)
		}
		if n < 2 {
			return fmt.Errorf("every size must be at least 2, not %d", n)
		}
		if slices.Contains(out, n) {
			return fmt.Errorf("size %d given twice", n)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	*s = out
	return nil
}

type config struct {
	sizes                                       sizeList
	edits, seed                                 int
	gap, quiet, settle, correctTimeout, timeout time.Duration
	// cpuProfile, if set, is where a CPU profile of the largest size's edit phase is written.
	cpuProfile string
	// trace is how many of the largest size's Holdfast edits have the controller's requests
	// listed (on stderr), in order, with their times from the edit.
	trace int
}

func main() {
	cfg := config{sizes: sizeList{10, 1000, 5000}}
	flag.Var(&cfg.sizes, "sizes", "ConfigMaps per service set: a comma-separated `list`, each measured in turn, smallest first; the smallest is the reference of the goal (each at least 2; above --inventory-shard-size, 1,000, the inventory is kept in ClusterServiceInventory shards; above 5,000 the set has one service and one inline ServiceTemplate per 5,000, e.g. 4 at 20,000)")
	flag.IntVar(&cfg.edits, "edits", 40, "edits per size and corrector, one at a time (at most 1,000 times the smallest size)")
	flag.IntVar(&cfg.seed, "seed", 1, "seed of the random order of the edited ConfigMaps")
	flag.DurationVar(&cfg.gap, "gap", 150*time.Millisecond, "pause after a correction before the next edit")
	flag.DurationVar(&cfg.quiet, "quiet", 250*time.Millisecond, "after a Holdfast correction, wait until the controller sent no request for this long (at most -correct-timeout)")
	flag.DurationVar(&cfg.settle, "settle", 5*time.Second, "wait after a size is deployed, before its first edit")
	flag.DurationVar(&cfg.correctTimeout, "correct-timeout", 30*time.Second, "how long to wait for one correction before going on")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "how long to wait for one size's deployment, and for its withdrawal")
	flag.IntVar(&cfg.trace, "trace", 0, "list on stderr the controller's requests, in order and timed from t0, for this many of the largest size's Holdfast edits (each until -quiet without a request)")
	flag.StringVar(&cfg.cpuProfile, "cpu-profile", "", "write a CPU profile (go tool pprof) of the largest size's edit phase to this `file`")
	measure.ParseFlags(measure.AtLeast("edits", 1))
	if most := measure.FightMax * cfg.sizes[0]; cfg.edits > most {
		// Each ConfigMap is edited at most ceil(edits / size) times (see picker).
		fmt.Fprintf(os.Stderr, "Error: -edits must be at most %d with a smallest size of %d (no object may be corrected more than %d times)\n", most, cfg.sizes[0], measure.FightMax)
		os.Exit(2)
	}
	measure.Main(func(ctx context.Context) error { return run(ctx, cfg) })
}

type bench struct {
	*measure.Harness
	cfg config
	// cs is this program's own client of the target (uncounted): the editor's, and its reads.
	cs    kubernetes.Interface
	obs   *measure.Observer
	ideal *measure.Ideal
}

func run(ctx context.Context, cfg config) (retErr error) {
	began := time.Now()
	b := &bench{cfg: cfg, obs: measure.NewObserver()}
	// This program's watch of the target and the ideal corrector, before the controller.
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	before := func(h *measure.Harness) error {
		b.Harness, b.cs = h, h.Clientsets[0]
		// The ideal corrector has a client of its own, not rate-limited, like this program's.
		idealCfg := rest.CopyConfig(h.Fleet.Targets[0].RESTConfig())
		idealCfg.QPS, idealCfg.Burst = -1, 0
		idealCS, err := kubernetes.NewForConfig(idealCfg)
		if err != nil {
			return fmt.Errorf("building the ideal corrector's client: %w", err)
		}
		b.ideal = measure.NewIdeal(idealCS, inventoryLabel, byIdeal, otherData)
		if err := b.obs.Start(watchCtx, b.cs, inventoryLabel); err != nil {
			return err
		}
		return b.ideal.Start(watchCtx)
	}
	h, err := measure.Start(ctx, measure.Setup{FleetOptions: measure.FleetOptions{Clusters: 1, ControllerManager: true, UnlimitedClients: true},
		ReadyTimeout: cfg.timeout, BeforeController: before})
	if err != nil {
		return err
	}
	defer func() {
		stopWatches()
		retErr = errors.Join(retErr, h.Stop())
	}()
	fmt.Printf("Fleet start (hub + 1 target with kube-controller-manager; CRDs, registration): %s. Target: %s. Sizes: %s ConfigMaps; %d edits per size and corrector.\n\n",
		measure.Seconds(h.FleetUp), b.Names[0], cfg.sizes.String(), cfg.edits)

	var results []*sizeResult
	for _, n := range cfg.sizes {
		r, err := b.measureSize(ctx, n)
		if err != nil {
			return fmt.Errorf("size %d: %w", n, err)
		}
		results = append(results, r)
		r.print(b, results[0])
	}
	printSummary(b, results)
	if f := b.ideal.Failures(); f != "" {
		fmt.Printf("The ideal corrector's applies that failed: %s\n\n", f)
	}
	fmt.Printf("Run time: %s (load average at the end: %s).\n", measure.Seconds(time.Since(began)), measure.LoadAverage())
	return nil
}

// names of one size's objects; chunk k of a size is its k-th template and service.
func setName(n int) string            { return fmt.Sprintf("bench-inv-%d", n) }
func templateName(n, k int) string    { return fmt.Sprintf("inv-%d-%d", n, k) }
func serviceName(k int) string        { return fmt.Sprintf("inventory-%d", k) }
func holdfastNS(n int) string         { return fmt.Sprintf("bench-inv-%d", n) }
func idealNS(n int) string            { return fmt.Sprintf("bench-ideal-%d", n) }
func configMapName(i int) string      { return fmt.Sprintf("cm-%05d", i) }
func chunks(n int) int                { return (n + chunkSize - 1) / chunkSize }
func chunkBounds(n, k int) (int, int) { return k * chunkSize, min((k+1)*chunkSize, n) }

// configMapNames are the names of n ConfigMaps.
func configMapNames(n int) []string {
	names := make([]string, n)
	for i := range n {
		names[i] = configMapName(i)
	}
	return names
}

// sizeResult is what was measured of one size.
type sizeResult struct {
	n                  int
	holdfast, ideal    []*measure.EditRun
	tails              []time.Duration
	counts             measure.RequestCounts
	window             time.Duration
	templateBytes      []int
	statusBytes        int
	shardBytes         []int
	deployed, idealDep time.Duration
	withdrawn          time.Duration
	idealApplies       int64
}

func (b *bench) measureSize(ctx context.Context, n int) (*sizeResult, error) {
	r := &sizeResult{n: n}
	hns, ins := holdfastNS(n), idealNS(n)

	fmt.Fprintf(os.Stderr, "Size %d: deploying the ideal corrector's %d ConfigMaps\n", n, n)
	began := time.Now()
	if err := b.ideal.Deploy(ctx, ins, configMapNames(n)); err != nil {
		return nil, err
	}
	r.idealDep = time.Since(began)

	fmt.Fprintf(os.Stderr, "Size %d: deploying a service set of %d ConfigMaps in %d service(s)\n", n, n, chunks(n))
	for k := range chunks(n) {
		from, to := chunkBounds(n, k)
		if err := b.CreateTemplate(ctx, templateNamespace, templateName(n, k), manifests(from, to, hns)); err != nil {
			return nil, err
		}
	}
	b.ExpectServiceSet(setName(n))
	created := time.Now()
	if err := b.CreateServiceSet(ctx, setName(n), holdfastv1.SyncModeContinuousWithDriftDetection, serviceName(0),
		holdfastv1.TemplateReference{Name: templateName(n, 0), Namespace: templateNamespace}, hns,
		func(mcs *holdfastv1.MultiClusterService) {
			for k := 1; k < chunks(n); k++ {
				mcs.Spec.Services = append(mcs.Spec.Services, holdfastv1.Service{Name: serviceName(k),
					Template: holdfastv1.TemplateReference{Name: templateName(n, k), Namespace: templateNamespace}, Namespace: hns})
			}
		}, measure.RaiseFightLimit); err != nil {
		return nil, err
	}
	if _, err := b.WaitStatuses(ctx, b.cfg.timeout, measure.ReadyInSync(n+1)); err != nil {
		return nil, fmt.Errorf("waiting for the deployment: %w", err)
	}
	r.deployed = time.Since(created)
	for k := range chunks(n) {
		size, err := b.servedSize(ctx, "/apis/"+holdfastv1.GroupVersion.String()+"/namespaces/"+templateNamespace+"/servicetemplates/"+templateName(n, k))
		if err != nil {
			return nil, err
		}
		r.templateBytes = append(r.templateBytes, size)
	}
	var err error
	if r.statusBytes, r.shardBytes, err = b.statusSizes(ctx, naming.StatusName(setName(n), b.Names[0])); err != nil {
		return nil, err
	}
	for _, ns := range []string{hns, ins} {
		if err := b.obs.WaitCount(ctx, ns, n, time.Minute); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(os.Stderr, "Size %d: deployed in %s; settling for %s\n", n, r.deployed.Round(time.Millisecond), b.cfg.settle)
	time.Sleep(b.cfg.settle)
	if !b.Counter.WaitQuiet(time.Second, time.Minute) {
		fmt.Fprintln(os.Stderr, "Warning: the controller did not go quiet before the edits")
	}

	fmt.Fprintf(os.Stderr, "Size %d: %d edits per corrector\n", n, b.cfg.edits)
	appliesBefore := b.ideal.Applies()
	pick := &picker{rng: rand.New(rand.NewPCG(uint64(b.cfg.seed), uint64(n))), n: n, prev: -1}
	b.Counter.Reset()
	profile := ""
	if n == b.cfg.sizes[len(b.cfg.sizes)-1] {
		// The controller runs in this process: the profile is the controller's.
		profile = b.cfg.cpuProfile
	}
	stopProfile, err := measure.StartCPUProfile(profile)
	if err != nil {
		return nil, err
	}
	windowStart := time.Now()
	for seq := range b.cfg.edits {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		name := configMapName(pick.next())

		stopTrace := func() []measure.TracedRequest { return nil }
		if n == b.cfg.sizes[len(b.cfg.sizes)-1] && seq < b.cfg.trace {
			stopTrace = b.Counter.Trace()
		}
		e := measure.Edit(ctx, b.cs, b.obs, editor, hns, name, seq, b.cfg.correctTimeout)
		r.holdfast = append(r.holdfast, e)
		if !e.Corrected.IsZero() {
			// The rest of the reconcile (e.g. the status patch) ends before the next edit.
			if b.Counter.WaitQuiet(b.cfg.quiet, b.cfg.correctTimeout) {
				r.tails = append(r.tails, max(b.Counter.Last().Sub(e.Corrected), 0))
			}
		}
		printTrace(e, stopTrace())
		time.Sleep(b.cfg.gap)

		r.ideal = append(r.ideal, measure.Edit(ctx, b.cs, b.obs, editor, ins, name, seq, b.cfg.correctTimeout))
		time.Sleep(b.cfg.gap)
	}
	b.Counter.WaitQuiet(time.Second, time.Minute)
	r.window = time.Since(windowStart)
	if err := stopProfile(); err != nil {
		return nil, err
	}
	r.counts = b.Counter.Reset()
	r.idealApplies = b.ideal.Applies() - appliesBefore

	fmt.Fprintf(os.Stderr, "Size %d: withdrawing\n", n)
	began = time.Now()
	if err := b.DeleteServiceSet(ctx, setName(n), b.cfg.timeout); err != nil {
		return nil, err
	}
	for k := range chunks(n) {
		tpl := &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: templateName(n, k)}}
		if err := b.Hub.Delete(ctx, tpl); err != nil {
			return nil, fmt.Errorf("deleting ServiceTemplate %s: %w", tpl.Name, err)
		}
	}
	if err := b.waitNamespaceGone(ctx, hns); err != nil {
		return nil, err
	}
	r.withdrawn = time.Since(began)
	if err := b.ideal.Withdraw(ctx, ins); err != nil {
		return nil, err
	}
	if err := b.waitNamespaceGone(ctx, ins); err != nil {
		return nil, err
	}
	return r, nil
}

// printTrace lists on stderr the controller's requests around one edit, timed from its t0.
func printTrace(e *measure.EditRun, requests []measure.TracedRequest) {
	if len(requests) == 0 {
		return
	}
	ms := func(t time.Time) string { return fmt.Sprintf("%+.1f ms", float64(t.Sub(e.T0).Microseconds())/1000) }
	fmt.Fprintf(os.Stderr, "Trace of the edit of %s/%s (t0 = the Update returned; sent %s; seen corrected at %s):\n", e.Namespace, e.Name, ms(e.TSend), ms(e.Corrected))
	for _, q := range requests {
		fmt.Fprintf(os.Stderr, "  sent %s, answered %s: %s %s\n", ms(q.Sent), ms(q.Answered), q.Server, q.Request)
	}
}

func (b *bench) servedSize(ctx context.Context, path string) (int, error) {
	body, err := b.Raw.Get().AbsPath(path).SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return len(body), nil
}

// statusSizes reads a status object and the inventory shards it names (status.inventory.names)
// as served, and returns their sizes in bytes.
func (b *bench) statusSizes(ctx context.Context, name string) (status int, shards []int, err error) {
	base := "/apis/" + holdfastv1.GroupVersion.String() + "/namespaces/" + b.Fleet.Namespace
	path := base + "/clusterservicestatuses/" + name
	body, err := b.Raw.Get().AbsPath(path).SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	css := &holdfastv1.ClusterServiceStatus{}
	if err := json.Unmarshal(body, css); err != nil {
		return 0, nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	if css.Status.Inventory == nil {
		return len(body), nil, nil
	}
	for _, shard := range css.Status.Inventory.Names {
		size, err := b.servedSize(ctx, base+"/clusterserviceinventories/"+shard)
		if err != nil {
			return 0, nil, err
		}
		shards = append(shards, size)
	}
	return len(body), shards, nil
}

func (b *bench) waitNamespaceGone(ctx context.Context, ns string) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, b.cfg.timeout, true, func(ctx context.Context) (bool, error) {
		_, err := b.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for namespace %s to be gone from the target: %w", ns, err)
	}
	return nil
}

// picker chooses the edited ConfigMaps: all n in a random order, then again in a new one, never
// the same twice in a row, so that none is edited more than ceil(edits / n) times.
type picker struct {
	rng     *rand.Rand
	n, prev int
	order   []int
}

func (p *picker) next() int {
	if len(p.order) == 0 {
		p.order = p.rng.Perm(p.n)
		if p.order[0] == p.prev {
			p.order[0], p.order[p.n-1] = p.order[p.n-1], p.order[0]
		}
	}
	i := p.order[0]
	p.order, p.prev = p.order[1:], i
	return i
}

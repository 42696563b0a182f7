// Command drift measures how fast Holdfast notices and undoes drift on its target clusters. It
// starts a hub and -clusters (3) targets with internal/localfleet, each WITH
// kube-controller-manager (Deployments get ReplicaSets and status updates, as on a real cluster,
// and those must not count as drift), creates one ServiceTemplate of a few dozen objects
// (ConfigMaps, Secrets, Services, Deployments) and one MultiClusterService in
// ContinuousWithDriftDetection mode selecting every target, and runs the Holdfast controller
// (controller.NewManager) in this process. Once every cluster is Ready and -settle (15s) passed,
// it performs -drifts (216) changes to managed objects, spread evenly over the clusters and over
// four kinds, all as field manager "bench-editor" and through clients impersonating the user
// "bench-editor" (groups system:masters and bench-breakglass), so that drift attribution has a
// known user to name and prevention lets the drifts through (-impersonate=false: as the
// target's admin, still as field manager bench-editor):
//
//   - edit: an Update of a ConfigMap's data.value or a Secret's data.token to another value;
//   - scale: an Update of a Deployment's scale subresource to 1 or 3 replicas (2 declared);
//   - relabel: a merge patch of a label Holdfast set (bench.holdfast.dev/tier) on any kind;
//   - delete: a deletion of any kind (Deployments in the default background propagation).
//
// The clusters run concurrently; on one cluster the drifts come one at a time: the next starts
// -gap (150ms) after the previous one was corrected (or after -correct-timeout, 10s), and a drift
// never touches one of the 3 objects drifted just before on that cluster. For each drift, t0 is
// when the change request returned.
//
//   - Correction latency is the time from t0 until an informer of this program on the target
//     (its own uncounted client, label-selected like the controller's) receives the object back
//     at its declared state: for a deletion, recreated (a new UID) at its declared state; for
//     the others, a version newer than the one the change produced (resourceVersions compared as
//     integers: etcd revisions) with the declared value, replicas and label. It includes the watch
//     delivery to this program.
//   - Detection latency is the matching DriftRecord's detectedTime minus t0. The controller runs
//     in this process, so both use the same clock; detectedTime has microsecond resolution and
//     may precede t0 (the controller's watch can deliver the change before this program has read
//     the response to its own request). A drift's record is the earliest record of the same
//     cluster, kind and name, of the expected type (Deleted for a deletion, Changed otherwise),
//     detected after the change request was sent and before the next drift of that object. The
//     status objects are watched throughout, so every record is seen even though status.drifts
//     keeps only the newest 20; their count is checked against status.driftCount.
//   - The record's correctedTime minus t0 is reported too: when the controller considers the
//     object corrected (taken after its apply returned).
//
// With -attribution the service set has `drift.attribution: Auto` (docs/drift.md, Attribution):
// Holdfast installs its MutatingAdmissionPolicy on every target, and the drifts start only once
// every status object has the condition Attribution True (AttributionActive) and -settle passed.
// The accounting then counts the matched records that name a user, per kind, and those that name
// bench-editor: the policy stamps updates (edit, relabel), not writes through the scale
// subresource nor deletions, which stay unattributed. Without the flag the set has no drift
// policy (attribution Off), as before; run both, alternating, to see what attribution costs.
//
// With -prevention Warn or Deny the set has `drift.prevention` so and `breakGlass.groups:
// [bench-breakglass]` (docs/drift.md, Prevention): Holdfast installs its
// ValidatingAdmissionPolicy on every target, whose match conditions every write of the editor
// and of Holdfast to a managed object then passes through; the editor, a break-glass member,
// is let through (and under Warn not warned), so the drifts are made as before. The drifts start
// once every status object also has the condition Prevention True (PreventionActive) and a
// dry-run edit by bench-editor outside the break-glass group was answered on every target (the
// setup table says how: refused under Deny, a warning under Warn). Scale drifts (a subresource)
// are never covered by the policy.
//
// It also reports drift records no drift explains: on objects never drifted (false drifts, e.g.
// from kube-controller-manager's status updates) and extra ones on drifted objects, telling
// apart those that record a drift's change a second time, found the other way (one record from
// a comparison, one from the watch: see bench/RESULTS.md, drift, "Extra records"); every
// request the controller sent to the targets and the hub during the drift phase (its HTTP
// transports are wrapped, as in deploy1000), and writes to the targets per drift, per object.
// -raw FILE writes every drift (tSend, t0, correction), every drift record and every informer
// event of the drifted objects as JSON lines, to look at what the tables summarise.
//
// The controller's hub client is built from the sandbox's REST config with QPS unset, so
// controller.NewManager's default limit of 50 requests/s (burst 100) applies to it, as it does for
// `holdfast controller --kubeconfig` and `holdfast sandbox`; -hub-qps -1 turns the limit off, as
// ctrl.GetConfig does for the in-cluster controller.
//
// Usage: go run ./bench/drift [-hub-qps -1] [-attribution] [-prevention Warn|Deny] [-impersonate=false] [-raw FILE]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/measure"
)

const (
	templateNamespace = "bench"
	templateName      = "drift"
	serviceSetName    = "bench-drift"
	serviceName       = "drift"
	targetNamespace   = "bench-drift"
	tierLabel         = "bench.holdfast.dev/tier"
	tierDeclared      = "declared"
	editor            = "bench-editor"
	breakGlassGroup   = "bench-breakglass"
	declaredReplicas  = 2
)

// Kinds of drift.
const (
	driftEdit    = "edit"
	driftScale   = "scale"
	driftRelabel = "relabel"
	driftDelete  = "delete"
)

var driftKinds = []string{driftEdit, driftScale, driftRelabel, driftDelete}

type config struct {
	clusters, drifts                            int
	configMaps, secrets, services, deployments  int
	gap, correctTimeout, settle, quiet, timeout time.Duration
	hubQPS                                      float64
	attribution, impersonate                    bool
	prevention                                  holdfastv1.PreventionMode
	raw                                         string
}

func main() {
	var cfg config
	flag.IntVar(&cfg.clusters, "clusters", 3, "number of target clusters")
	flag.IntVar(&cfg.drifts, "drifts", 216, "drifts in all, spread evenly over the clusters and the four kinds")
	flag.IntVar(&cfg.configMaps, "configmaps", 12, "ConfigMaps in the template")
	flag.IntVar(&cfg.secrets, "secrets", 8, "Secrets in the template")
	flag.IntVar(&cfg.services, "services", 6, "Services in the template")
	flag.IntVar(&cfg.deployments, "deployments", 6, "Deployments in the template")
	flag.DurationVar(&cfg.gap, "gap", 150*time.Millisecond, "pause on a cluster between a drift's correction and the next drift")
	flag.DurationVar(&cfg.correctTimeout, "correct-timeout", 10*time.Second, "how long to wait for a drift's correction before going on")
	flag.DurationVar(&cfg.settle, "settle", 15*time.Second, "wait after every cluster is Ready before drifting (kube-controller-manager churn, no drift expected)")
	flag.DurationVar(&cfg.quiet, "quiet", 2*time.Second, "the drift phase closes once no counted request was sent or answered for this long")
	flag.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "how long to wait for the deployment")
	flag.Float64Var(&cfg.hubQPS, "hub-qps", 0, "QPS of the controller's hub client: 0 leaves it unset, so controller.NewManager's default applies (50/s, burst 100), as for `holdfast controller --kubeconfig` and `holdfast sandbox`; -1 turns client-side limiting off, as ctrl.GetConfig does in-cluster")
	flag.BoolVar(&cfg.attribution, "attribution", false, "give the service set drift.attribution: Auto and wait until the policy is active on every target before drifting")
	prevention := flag.String("prevention", string(holdfastv1.PreventionOff), "the service set's drift.prevention (Off, Warn or Deny), with breakGlass.groups ["+breakGlassGroup+"], the editor's group; Warn or Deny: wait until the policy is active on every target before drifting")
	flag.BoolVar(&cfg.impersonate, "impersonate", true, "make the drifts as the impersonated user "+editor+"; false: as the target's admin (field manager "+editor+" still), not with -prevention Warn or Deny")
	flag.StringVar(&cfg.raw, "raw", "", "write every drift, drift record and informer event of the drifted objects to this file, as JSON lines")
	measure.ParseFlags(measure.AtLeast("clusters", 1), measure.AtLeast("drifts", 4),
		measure.AtLeast("configmaps", 4), measure.AtLeast("secrets", 4), measure.AtLeast("services", 4), measure.AtLeast("deployments", 4))
	cfg.prevention = holdfastv1.PreventionMode(*prevention)
	switch {
	case !slices.Contains([]holdfastv1.PreventionMode{holdfastv1.PreventionOff, holdfastv1.PreventionWarn, holdfastv1.PreventionDeny}, cfg.prevention):
		fmt.Fprintf(os.Stderr, "Error: -prevention %q: want Off, Warn or Deny\n", *prevention)
		os.Exit(2)
	case cfg.prevented() && !cfg.impersonate:
		fmt.Fprintln(os.Stderr, "Error: -prevention "+*prevention+" needs -impersonate: the admin is not in the break-glass group "+breakGlassGroup)
		os.Exit(2)
	}

	measure.Main(func(ctx context.Context) error { return run(ctx, cfg) })
}

// prevented reports whether the service set has drift.prevention Warn or Deny.
func (c config) prevented() bool { return c.prevention != holdfastv1.PreventionOff }

// target is one target cluster as this program sees it, through uncounted clients: c and cs
// read and watch as the target's admin, the drifts are made through ec and ecs, which impersonate
// the user editor (unless -impersonate=false: then they are the admin's too).
type target struct {
	name    string
	c       client.Client
	cs      kubernetes.Interface
	ec      client.Client
	ecs     kubernetes.Interface
	log     *objectLog
	factory informers.SharedInformerFactory
}

type bench struct {
	*measure.Harness
	cfg     config
	m       mix
	targets []*target
	records *recordLog
}

func run(ctx context.Context, cfg config) (retErr error) {
	setup := measure.NewTable("measure", "value")
	b := &bench{cfg: cfg, m: mix{ConfigMaps: cfg.configMaps, Secrets: cfg.secrets, Services: cfg.services, Deployments: cfg.deployments}}
	// This program's watches of the targets and of the drift records, and the template, before
	// the controller.
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	before := func(h *measure.Harness) (err error) {
		b.Harness = h
		b.ExpectServiceSet(serviceSetName)
		for i, name := range b.Names {
			t := &target{name: name, c: b.Targets[i], cs: b.Clientsets[i], log: &objectLog{events: map[objKey][]objEvent{}}}
			if t.ec, t.ecs, err = editorClients(b.Fleet.Targets[i].RESTConfig(), cfg.impersonate); err != nil {
				return fmt.Errorf("building the editor's clients of %s: %w", name, err)
			}
			b.targets = append(b.targets, t)
		}
		setup.Row(fmt.Sprintf("fleet start (hub + %d targets with kube-controller-manager, in parallel; CRDs, registration)", cfg.clusters), measure.Seconds(h.FleetUp))
		b.records = newRecordLog(b.Statuses)
		go b.records.run(watchCtx, b.Watcher, b.Fleet.Namespace)
		for _, t := range b.targets {
			if err := t.startInformers(watchCtx); err != nil {
				return err
			}
		}

		if err := b.CreateTemplate(ctx, templateNamespace, templateName, manifests(b.m, targetNamespace)); err != nil {
			return err
		}
		setup.Row("objects per cluster", fmt.Sprintf("%d (%s)", b.m.total(), b.m))
		setup.Row("controller's hub client rate limit", map[bool]string{true: "controller.NewManager's default (QPS unset: 50/s, burst 100)", false: fmt.Sprintf("QPS %g (-1: none)", cfg.hubQPS)}[cfg.hubQPS == 0])
		return nil
	}
	h, err := measure.Start(ctx, measure.Setup{FleetOptions: measure.FleetOptions{Clusters: cfg.clusters, ControllerManager: true, UnlimitedClients: true},
		HubQPS: float32(cfg.hubQPS), ReadyTimeout: cfg.timeout, BeforeController: before})
	if err != nil {
		return err
	}
	defer func() {
		stopWatch()
		retErr = errors.Join(retErr, h.Stop())
	}()

	setup.Row("drift attribution (spec.drift.attribution)", map[bool]string{true: "Auto", false: "Off"}[cfg.attribution])
	setup.Row("drift prevention (spec.drift.prevention)", map[bool]string{true: string(cfg.prevention) + ", breakGlass.groups [" + breakGlassGroup + "]", false: "Off"}[cfg.prevented()])
	setup.Row("the drifts' user and field manager", map[bool]string{
		true:  fmt.Sprintf("user %s (impersonated, groups system:masters, %s), field manager %s", editor, breakGlassGroup, editor),
		false: "the target's admin (not impersonated), field manager " + editor}[cfg.impersonate])
	created := time.Now()
	if err := b.CreateServiceSet(ctx, serviceSetName, holdfastv1.SyncModeContinuousWithDriftDetection, serviceName,
		holdfastv1.TemplateReference{Name: templateName, Namespace: templateNamespace}, targetNamespace, func(mcs *holdfastv1.MultiClusterService) {
			mcs.Spec.Drift = driftPolicy(cfg)
		}); err != nil {
		return err
	}
	if err := b.waitDeployed(ctx); err != nil {
		return err
	}
	setup.Row(fmt.Sprintf("MultiClusterService created until all %d ClusterServiceStatuses Applied with %d of %d in sync", cfg.clusters, b.managed(), b.managed()), measure.Seconds(time.Since(created)))
	if cfg.attribution {
		if err := b.waitCondition(ctx, holdfastv1.AttributionCondition, holdfastv1.AttributionActiveReason); err != nil {
			return err
		}
		setup.Row(fmt.Sprintf("MultiClusterService created until all %d ClusterServiceStatuses have Attribution True (%s)", cfg.clusters, holdfastv1.AttributionActiveReason), measure.Seconds(time.Since(created)))
	}
	if cfg.prevented() {
		if err := b.waitCondition(ctx, holdfastv1.PreventionCondition, holdfastv1.PreventionActiveReason); err != nil {
			return err
		}
		setup.Row(fmt.Sprintf("MultiClusterService created until all %d ClusterServiceStatuses have Prevention True (%s)", cfg.clusters, holdfastv1.PreventionActiveReason), measure.Seconds(time.Since(created)))
		check, err := b.checkPrevention(ctx)
		if err != nil {
			return err
		}
		setup.Row("check: a dry-run edit of a ConfigMap by "+editor+" without the break-glass group, on each target", check)
	}
	fmt.Fprintf(os.Stderr, "Deployed in %s; settling for %s\n", time.Since(created).Round(time.Millisecond), cfg.settle)
	time.Sleep(cfg.settle)
	if !b.Counter.WaitQuiet(cfg.quiet, time.Minute) {
		fmt.Fprintln(os.Stderr, "Warning: the controller did not go quiet before the drifts")
	}
	preCount := b.records.driftCounts()
	preRecords := b.records.all()
	setup.Row(fmt.Sprintf("drift records before the first drift (deployment, then %s with kube-controller-manager at work)", cfg.settle), fmt.Sprintf("%d (status.driftCount: %s)", len(preRecords), countsString(preCount, b.Names)))

	// Drift phase.
	fmt.Fprintf(os.Stderr, "Drifting: %d drifts on %d clusters\n", cfg.drifts, cfg.clusters)
	b.Counter.Reset()
	phaseStart := time.Now()
	perCluster := make([][]*driftRun, len(b.targets))
	var wg sync.WaitGroup
	for i, t := range b.targets {
		n := cfg.drifts / cfg.clusters
		if i < cfg.drifts%cfg.clusters {
			n++
		}
		wg.Go(func() { perCluster[i] = b.drive(ctx, i, t, n) })
	}
	wg.Wait()
	drifted := time.Since(phaseStart)
	quiet := b.Counter.WaitQuiet(cfg.quiet, time.Minute)
	phase := time.Since(phaseStart)
	counts := b.Counter.Reset()
	// Let the status watch catch up with the last status patches.
	caughtUp := b.records.waitSettled(cfg.quiet, 30*time.Second)
	postCount := b.records.driftCounts()
	stopWatch()

	var runs []*driftRun
	for _, rs := range perCluster {
		runs = append(runs, rs...)
	}
	setup.Row("drifts performed", fmt.Sprintf("%d (%s)", len(runs), perKindCounts(runs)))
	setup.Row("drift phase: first drift until the last one corrected", measure.Seconds(drifted))
	setup.Row("drift phase window (then "+cfg.quiet.String()+" without a counted request)", measure.Seconds(phase)+map[bool]string{true: "", false: " (never quiet: closed after 1 minute)"}[quiet])
	setup.Row("status.driftCount after the drifts", countsString(postCount, b.Names))

	a := b.analyse(runs, preRecords)
	setup.Row("drift records seen by this program's watch of the status objects, new in the drift phase", fmt.Sprintf("%d; status.driftCount grew by %d%s", a.newRecords, sumDiff(postCount, preCount), map[bool]string{true: "", false: " (status events still arriving 30s after the drift phase)"}[caughtUp]))
	setup.Row("records that left status.drifts before 20 newer ones pushed them out (overwritten)", fmt.Sprint(len(a.lost)))
	setup.Row("times status.driftCount went down", fmt.Sprint(a.backwards))

	final, err := b.finalState(ctx)
	if err != nil {
		return err
	}
	setup.Row("after the drifts", final)

	fmt.Println("#### Setup and accounting")
	fmt.Println()
	fmt.Println(setup)
	a.print(b, runs)
	b.printRequests(counts, runs, phase)
	if cfg.raw != "" {
		return b.writeRaw(cfg.raw, runs, preRecords)
	}
	return nil
}

func countsString(m map[string]int64, names []string) string {
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %d", n, m[n]))
	}
	return strings.Join(parts, ", ")
}

func sumDiff(post, pre map[string]int64) int64 {
	var s int64
	for k, v := range post {
		s += v - pre[k]
	}
	return s
}

func perKindCounts(runs []*driftRun) string {
	n := map[string]int{}
	for _, r := range runs {
		n[r.kind]++
	}
	var parts []string
	for _, k := range driftKinds {
		parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
	}
	return strings.Join(parts, ", ")
}

// statusSummary reads every status object and says how many are Applied with every object in
// sync. Not Ready: the targets run no nodes, so the Deployments never become Available and
// Healthy stays Progressing, which drift handling does not depend on.
func (b *bench) statusSummary(ctx context.Context) (good int, bad []string, err error) {
	for name, cluster := range b.Statuses {
		css := &holdfastv1.ClusterServiceStatus{}
		if err := b.Hub.Get(ctx, client.ObjectKey{Namespace: b.Fleet.Namespace, Name: name}, css); err != nil {
			if apierrors.IsNotFound(err) {
				bad = append(bad, cluster+": no status object yet")
				continue
			}
			return 0, nil, fmt.Errorf("reading ClusterServiceStatus %s: %w", name, err)
		}
		n := b.managed()
		if meta.IsStatusConditionTrue(css.Status.Conditions, holdfastv1.AppliedCondition) && css.Status.ResourceCount == n && css.Status.InSyncCount == n {
			good++
			continue
		}
		var conds []string
		for _, c := range css.Status.Conditions {
			cond := c.Type + "=" + string(c.Status) + "/" + c.Reason
			if c.Type == holdfastv1.HealthyCondition && c.Status != metav1.ConditionTrue {
				cond += " (" + c.Message + ")"
			}
			conds = append(conds, cond)
		}
		bad = append(bad, fmt.Sprintf("%s: %d resources, %d in sync, %s", cluster, css.Status.ResourceCount, css.Status.InSyncCount, strings.Join(conds, ",")))
	}
	sort.Strings(bad)
	return good, bad, nil
}

// driftPolicy is the service set's spec.drift: none unless attribution or prevention is asked
// for.
func driftPolicy(cfg config) *holdfastv1.DriftPolicy {
	if !cfg.attribution && !cfg.prevented() {
		return nil
	}
	p := &holdfastv1.DriftPolicy{}
	if cfg.attribution {
		p.Attribution = holdfastv1.AttributionAuto
	}
	if cfg.prevented() {
		p.Prevention = cfg.prevention
		p.BreakGlass = &holdfastv1.BreakGlass{Groups: []string{breakGlassGroup}}
	}
	return p
}

// managed is how many objects each status object should count in sync: the template's, with
// attribution the policy and its binding (the service holdfast.attribution), with prevention
// its policy and binding for the set's one mode (the service holdfast.prevention).
func (b *bench) managed() int32 {
	n := int32(b.m.total())
	if b.cfg.attribution {
		n += 2
	}
	if b.cfg.prevented() {
		n += 2
	}
	return n
}

// waitCondition waits until every status object has the condition typ True with reason: the
// attribution or prevention policy applied on its target.
func (b *bench) waitCondition(ctx context.Context, typ, reason string) error {
	var bad []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, b.cfg.timeout, true, func(ctx context.Context) (bool, error) {
		bad = nil
		for name, cluster := range b.Statuses {
			css := &holdfastv1.ClusterServiceStatus{}
			if err := b.Hub.Get(ctx, client.ObjectKey{Namespace: b.Fleet.Namespace, Name: name}, css); err != nil {
				bad = append(bad, cluster+": "+err.Error())
				continue
			}
			c := meta.FindStatusCondition(css.Status.Conditions, typ)
			switch {
			case c == nil:
				bad = append(bad, cluster+": no "+typ+" condition")
			case c.Status != metav1.ConditionTrue || c.Reason != reason:
				bad = append(bad, fmt.Sprintf("%s: %s=%s/%s %s", cluster, c.Type, c.Status, c.Reason, c.Message))
			}
		}
		sort.Strings(bad)
		return len(bad) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s True/%s (%s): %w", typ, reason, strings.Join(bad, "; "), err)
	}
	return nil
}

// checkPrevention makes, on each target, a dry-run edit of a managed ConfigMap as the editor
// outside the break-glass group, and says how the API servers answered: under Deny they should
// refuse it, under Warn let it through with a warning, each naming the service set.
func (b *bench) checkPrevention(ctx context.Context) (string, error) {
	answers := map[string][]string{}
	example := ""
	for i, t := range b.targets {
		cfg := rest.CopyConfig(b.Fleet.Targets[i].RESTConfig())
		cfg.Impersonate = rest.ImpersonationConfig{UserName: editor, Groups: []string{"system:masters"}}
		warnings := &warningLog{}
		cfg.WarningHandler = warnings
		c, err := client.New(cfg, client.Options{Scheme: t.c.Scheme()})
		if err != nil {
			return "", fmt.Errorf("building a client of %s: %w", t.name, err)
		}
		cm := &corev1.ConfigMap{}
		name := b.m.objects()[kindConfigMap][0].Name
		if err := c.Get(ctx, client.ObjectKey{Namespace: targetNamespace, Name: name}, cm); err != nil {
			return "", fmt.Errorf("reading ConfigMap %s on %s: %w", name, t.name, err)
		}
		cm.Data["value"] = "prevention-check"
		err = c.Update(ctx, cm, client.DryRunAll, client.FieldOwner(editor))
		var answer, msg string
		switch {
		case err == nil && len(warnings.texts) > 0:
			answer, msg = "allowed with a warning", warnings.texts[0]
		case err == nil:
			answer = "allowed without a warning"
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
			answer, msg = "refused", err.Error()
		default:
			return "", fmt.Errorf("dry-run edit of ConfigMap %s on %s: %w", name, t.name, err)
		}
		answers[answer] = append(answers[answer], t.name)
		if example == "" && msg != "" {
			example = msg
		}
	}
	var parts []string
	for answer, clusters := range answers {
		parts = append(parts, fmt.Sprintf("%s on %d of %d (%s)", answer, len(clusters), len(b.targets), strings.Join(clusters, ", ")))
	}
	sort.Strings(parts)
	if len(example) > 200 {
		example = example[:200] + "…"
	}
	if example != "" {
		parts = append(parts, "e.g. "+example)
	}
	return strings.Join(parts, "; "), nil
}

// warningLog keeps the warnings an API server sent (rest.WarningHandler).
type warningLog struct {
	mu    sync.Mutex
	texts []string
}

func (w *warningLog) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

// editorClients returns clients of a target that impersonate the user editor, in the group
// system:masters so that it may change anything and in the service set's break-glass group so
// that prevention lets its drifts through; without impersonate, the admin's own.
func editorClients(cfg *rest.Config, impersonate bool) (client.Client, kubernetes.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	if impersonate {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: editor, Groups: []string{"system:masters", breakGlassGroup}}
	}
	scheme, err := controller.Scheme()
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return c, cs, nil
}

func (b *bench) waitDeployed(ctx context.Context) error {
	var bad []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, b.cfg.timeout, true, func(ctx context.Context) (bool, error) {
		good, bd, err := b.statusSummary(ctx)
		if err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		bad = bd
		return good == len(b.Names), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the deployment (%s): %w", strings.Join(bad, "; "), err)
	}
	return nil
}

// finalState checks the status objects and that every managed object is at its declared state
// as this program's informers last saw it.
func (b *bench) finalState(ctx context.Context) (string, error) {
	good, bad, err := b.statusSummary(ctx)
	if err != nil {
		return "", err
	}
	s := fmt.Sprintf("%d of %d ClusterServiceStatuses Applied with %d of %d in sync", good, len(b.Names), b.managed(), b.managed())
	if len(bad) > 0 {
		s += " (" + strings.Join(bad, "; ") + ")"
	}
	declared, total := 0, 0
	var off []string
	for _, t := range b.targets {
		for _, objs := range b.m.objects() {
			for _, o := range objs {
				total++
				if ev, ok := t.log.last(o); ok && !ev.deleted && ev.declared {
					declared++
				} else if len(off) < 10 {
					off = append(off, t.name+" "+o.String())
				}
			}
		}
	}
	s += fmt.Sprintf("; %d of %d drift candidates at their declared state on the targets", declared, total)
	if len(off) > 0 {
		s += " (not: " + strings.Join(off, ", ") + ")"
	}
	return s, nil
}

// objEvent is one informer event for a managed object on a target, as this program saw it.
type objEvent struct {
	at       time.Time
	rv       int64
	uid      types.UID
	deleted  bool
	declared bool
}

// objectLog keeps every informer event per object, with the time it was received.
type objectLog struct {
	mu     sync.Mutex
	events map[objKey][]objEvent
}

func (l *objectLog) add(obj any, deleted bool) {
	at := time.Now()
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	mo, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	labelOK := mo.GetLabels()[tierLabel] == tierDeclared
	var key objKey
	var declared bool
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		key, declared = objKey{kindConfigMap, o.Name}, labelOK && o.Data["value"] == declaredValue(o.Name)
	case *corev1.Secret:
		key, declared = objKey{kindSecret, o.Name}, labelOK && string(o.Data["token"]) == declaredValue(o.Name)
	case *corev1.Service:
		key, declared = objKey{kindService, o.Name}, labelOK
	case *appsv1.Deployment:
		key, declared = objKey{kindDeployment, o.Name}, labelOK && o.Spec.Replicas != nil && *o.Spec.Replicas == declaredReplicas
	default:
		return
	}
	l.mu.Lock()
	l.events[key] = append(l.events[key], objEvent{at: at, rv: measure.ParseRV(mo.GetResourceVersion()), uid: mo.GetUID(), deleted: deleted, declared: declared})
	l.mu.Unlock()
}

func (l *objectLog) last(k objKey) (objEvent, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	evs := l.events[k]
	if len(evs) == 0 {
		return objEvent{}, false
	}
	return evs[len(evs)-1], true
}

// correction returns the first event showing the drifted object back at its declared state.
func (l *objectLog) correction(d *driftRun) (objEvent, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range l.events[d.obj] {
		if ev.deleted || !ev.declared {
			continue
		}
		if d.kind == driftDelete && ev.uid != d.oldUID {
			return ev, true
		}
		if d.kind != driftDelete && d.respRV > 0 && ev.rv > d.respRV {
			return ev, true
		}
	}
	return objEvent{}, false
}

func (t *target) startInformers(ctx context.Context) error {
	t.factory = informers.NewSharedInformerFactoryWithOptions(t.cs, 0, informers.WithNamespace(targetNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = holdfastv1.ManagedByLabel + "=" + holdfastv1.ManagedByValue
		}))
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { t.log.add(obj, false) },
		UpdateFunc: func(_, obj any) { t.log.add(obj, false) },
		DeleteFunc: func(obj any) { t.log.add(obj, true) },
	}
	for _, inf := range []toolscache.SharedIndexInformer{
		t.factory.Core().V1().ConfigMaps().Informer(), t.factory.Core().V1().Secrets().Informer(),
		t.factory.Core().V1().Services().Informer(), t.factory.Apps().V1().Deployments().Informer(),
	} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return fmt.Errorf("watching %s: %w", t.name, err)
		}
	}
	t.factory.Start(ctx.Done())
	return nil
}

// driftRun is one drift and what was measured of it.
type driftRun struct {
	cluster string
	seq     int
	kind    string
	obj     objKey
	// tSend is just before the change request, t0 when it returned.
	tSend, t0 time.Time
	respRV    int64
	oldUID    types.UID
	err       error
	corrected time.Time // zero: never seen corrected
	record    *seenRecord
}

// plan returns the order in which a cluster's drift kinds pick objects.
func (b *bench) pools() map[string][]objKey {
	objs := b.m.objects()
	interleave := func(lists ...[]objKey) []objKey {
		var out []objKey
		for i := 0; ; i++ {
			added := false
			for _, l := range lists {
				if i < len(l) {
					out = append(out, l[i])
					added = true
				}
			}
			if !added {
				return out
			}
		}
	}
	all := interleave(objs[kindConfigMap], objs[kindSecret], objs[kindService], objs[kindDeployment])
	rev := slices.Clone(all)
	slices.Reverse(rev)
	return map[string][]objKey{
		driftEdit:    interleave(objs[kindConfigMap], objs[kindSecret]),
		driftScale:   objs[kindDeployment],
		driftRelabel: all,
		driftDelete:  rev,
	}
}

// drive performs n drifts on one cluster, one at a time.
func (b *bench) drive(ctx context.Context, ci int, t *target, n int) []*driftRun {
	pools := b.pools()
	next := map[string]int{}
	var recent []objKey
	var runs []*driftRun
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		kind := driftKinds[(i+ci)%len(driftKinds)]
		pool := pools[kind]
		var obj objKey
		for {
			obj = pool[next[kind]%len(pool)]
			next[kind]++
			if !slices.Contains(recent, obj) {
				break
			}
		}
		recent = append(recent, obj)
		if len(recent) > 3 {
			recent = recent[1:]
		}
		d := &driftRun{cluster: t.name, seq: i, kind: kind, obj: obj}
		runs = append(runs, d)
		d.err = t.change(ctx, d)
		if d.err != nil {
			fmt.Fprintf(os.Stderr, "%s drift %d (%s %s): %v\n", t.name, i, kind, obj, d.err)
			time.Sleep(b.cfg.gap)
			continue
		}
		deadline := d.t0.Add(b.cfg.correctTimeout)
		for {
			if ev, ok := t.log.correction(d); ok {
				d.corrected = ev.at
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintf(os.Stderr, "%s drift %d (%s %s): not corrected after %s\n", t.name, i, kind, obj, b.cfg.correctTimeout)
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(b.cfg.gap)
	}
	return runs
}

func newObject(kind string) client.Object {
	switch kind {
	case kindConfigMap:
		return &corev1.ConfigMap{}
	case kindSecret:
		return &corev1.Secret{}
	case kindService:
		return &corev1.Service{}
	default:
		return &appsv1.Deployment{}
	}
}

// change makes one drift as user and field manager bench-editor and records when.
func (t *target) change(ctx context.Context, d *driftRun) error {
	key := client.ObjectKey{Namespace: targetNamespace, Name: d.obj.Name}
	value := fmt.Sprintf("edited-%d", d.seq)
	for attempt := 0; ; attempt++ {
		obj := newObject(d.obj.Kind)
		if err := t.ec.Get(ctx, key, obj); err != nil {
			return fmt.Errorf("reading: %w", err)
		}
		d.oldUID = obj.GetUID()
		var err error
		switch d.kind {
		case driftEdit:
			switch o := obj.(type) {
			case *corev1.ConfigMap:
				o.Data["value"] = value
			case *corev1.Secret:
				o.Data["token"] = []byte(value)
			}
			d.tSend = time.Now()
			err = t.ec.Update(ctx, obj, client.FieldOwner(editor))
			d.t0 = time.Now()
			d.respRV = measure.ParseRV(obj.GetResourceVersion())
		case driftScale:
			replicas := int32(3)
			if d.seq%2 == 1 {
				replicas = 1
			}
			// No resourceVersion: an unconditional update, so that kube-controller-manager's
			// status writes cannot make it conflict.
			scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Namespace: targetNamespace, Name: d.obj.Name}, Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
			d.tSend = time.Now()
			var res *autoscalingv1.Scale
			res, err = t.ecs.AppsV1().Deployments(targetNamespace).UpdateScale(ctx, d.obj.Name, scale, metav1.UpdateOptions{FieldManager: editor})
			d.t0 = time.Now()
			if err == nil {
				d.respRV = measure.ParseRV(res.ResourceVersion)
			}
		case driftRelabel:
			patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, tierLabel, value)
			d.tSend = time.Now()
			err = t.ec.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(editor))
			d.t0 = time.Now()
			d.respRV = measure.ParseRV(obj.GetResourceVersion())
		case driftDelete:
			d.tSend = time.Now()
			err = t.ec.Delete(ctx, obj)
			d.t0 = time.Now()
		}
		if apierrors.IsConflict(err) && attempt < 5 {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", d.kind, err)
		}
		return nil
	}
}

// recKey identifies a drift record.
type recKey struct {
	cluster, kind, name string
	typ                 holdfastv1.DriftType
	detected            int64 // UnixMicro
}

type seenRecord struct {
	holdfastv1.DriftRecord
	cluster   string
	firstSeen time.Time
	used      bool
}

// recordLog collects every drift record the status objects ever show.
type recordLog struct {
	mu       sync.Mutex
	statuses map[string]string
	records  map[recKey]*seenRecord
	counts   map[string]int64 // cluster -> status.driftCount last seen
	seen     map[string]int   // cluster -> records seen
	last     time.Time        // when the latest status event arrived
	// present is each cluster's status.drifts in the latest version seen.
	present map[string]map[recKey]bool
	// lost are records that left status.drifts before 20 newer ones pushed them out;
	// backwards counts the times status.driftCount went down.
	lost      map[recKey]bool
	backwards int
}

func newRecordLog(statuses map[string]string) *recordLog {
	return &recordLog{statuses: statuses, records: map[recKey]*seenRecord{}, counts: map[string]int64{}, seen: map[string]int{},
		present: map[string]map[recKey]bool{}, lost: map[recKey]bool{}}
}

func (l *recordLog) see(css *holdfastv1.ClusterServiceStatus) {
	cluster, ok := l.statuses[css.Name]
	if !ok {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = now
	if prev, ok := l.counts[cluster]; ok && css.Status.DriftCount < prev {
		l.backwards++
	}
	l.counts[cluster] = css.Status.DriftCount
	present := map[recKey]bool{}
	var oldest *metav1.MicroTime
	for i := range css.Status.Drifts {
		d := &css.Status.Drifts[i]
		if oldest == nil || d.DetectedTime.Before(oldest) {
			oldest = &d.DetectedTime
		}
		k := recKey{cluster, d.Kind, d.Name, d.Type, d.DetectedTime.UnixMicro()}
		present[k] = true
		if r, ok := l.records[k]; ok {
			r.DriftRecord = *d.DeepCopy()
			continue
		}
		l.records[k] = &seenRecord{DriftRecord: *d.DeepCopy(), cluster: cluster, firstSeen: now}
		l.seen[cluster]++
	}
	for k := range l.present[cluster] {
		if present[k] {
			continue
		}
		// Gone: pushed out by newer ones only if the list is full and it is older than all.
		if len(css.Status.Drifts) < holdfastv1.MaxDriftRecords || (oldest != nil && k.detected > oldest.UnixMicro()) {
			l.lost[k] = true
		}
	}
	l.present[cluster] = present
}

// lostRecords returns the records that vanished from status.drifts before their time, and how
// many times status.driftCount went down.
func (l *recordLog) lostRecords() ([]*seenRecord, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*seenRecord
	for k := range l.lost {
		out = append(out, l.records[k])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].DetectedTime.Before(&out[j].DetectedTime) })
	return out, l.backwards
}

func (l *recordLog) driftCounts() map[string]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int64{}
	for k, v := range l.counts {
		out[k] = v
	}
	return out
}

func (l *recordLog) all() []*seenRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*seenRecord
	for _, r := range l.records {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].DetectedTime.Before(&out[j].DetectedTime) })
	return out
}

// waitSettled waits until no status event arrived for quiet, at most timeout.
func (l *recordLog) waitSettled(quiet, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		l.mu.Lock()
		since := time.Since(l.last)
		l.mu.Unlock()
		if since >= quiet {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// run lists and watches the status objects until ctx ends, re-listing when a watch closes.
func (l *recordLog) run(ctx context.Context, c client.WithWatch, ns string) {
	for ctx.Err() == nil {
		list := &holdfastv1.ClusterServiceStatusList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for i := range list.Items {
			l.see(&list.Items[i])
		}
		w, err := c.Watch(ctx, &holdfastv1.ClusterServiceStatusList{}, client.InNamespace(ns),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
		if err != nil {
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				break
			}
			if css, ok := ev.Object.(*holdfastv1.ClusterServiceStatus); ok && ev.Type != watch.Deleted {
				l.see(css)
			}
		}
		w.Stop()
	}
}

package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/chartserver"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/naming"
)

// serviceDemo walks through deploying the sample fleet (samples.go) to the sandbox targets
// and reads back from each target what landed there.
type serviceDemo struct {
	out     io.Writer
	f       *localfleet.Fleet
	hub     client.Client
	targets map[string]client.Client
	// clusters are the registered Clusters, in target order.
	clusters []holdfastv1.Cluster
	step     func(format string, args ...any)
	timeout  time.Duration
	// runVerb runs a CLI verb (Options.RunVerb).
	runVerb func(ctx context.Context, out io.Writer, verb string, args ...string) error

	// The chart servers live as long as the demo: the controller may fetch again at any time.
	repo     *chartserver.Repo
	registry *chartserver.Registry
	chartRef string
	// nodes is the number of simulated nodes per target (Options.Nodes).
	nodes int
}

func newServiceDemo(ctx context.Context, out io.Writer, f *localfleet.Fleet, step func(string, ...any), timeout time.Duration,
	runVerb func(context.Context, io.Writer, string, ...string) error) (*serviceDemo, error) {
	d := &serviceDemo{out: out, f: f, hub: f.HubClient(), targets: map[string]client.Client{}, step: step, timeout: timeout, runVerb: runVerb}
	scheme, err := controller.Scheme()
	if err != nil {
		return nil, err
	}
	for _, t := range f.Targets {
		c, err := client.New(t.RESTConfig(), client.Options{Scheme: scheme})
		if err != nil {
			return nil, fmt.Errorf("building a client of target %s: %w", t.Name(), err)
		}
		d.targets[t.Name()] = c
	}
	clusters, err := f.Clusters(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range f.Targets {
		i := slices.IndexFunc(clusters, func(c holdfastv1.Cluster) bool { return c.Name == t.Name() })
		if i < 0 {
			return nil, fmt.Errorf("target %s is not registered as a Cluster in %s", t.Name(), f.Namespace)
		}
		d.clusters = append(d.clusters, clusters[i])
	}
	return d, nil
}

// run is the deployment part of the demo. timed records how long each section took.
func (d *serviceDemo) run(ctx context.Context, timed func(string, time.Time)) error {
	d.step("Serving the hello Helm chart on loopback: an HTTP chart repository and an OCI registry")
	start := time.Now()
	if err := d.startChartServers(); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "HTTP chart repository: %s (hello %s)\n", d.repo.URL(), demoChartVersion)
	fmt.Fprintf(d.out, "OCI registry:          %s (%s)\n", d.registry.URL(), d.chartRef)

	d.step("Declaring the sample fleet on the hub")
	if err := d.declare(ctx, d.repo.URL(), d.registry.URL()); err != nil {
		return err
	}
	timed("Chart servers and declarations", start)

	d.step("Waiting for every ClusterServiceStatus to be Ready")
	start = time.Now()
	want := d.expectedStatuses(envSelector(canaryStartEnv))
	if err := d.waitStatuses(ctx, want, nil); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "All %d ClusterServiceStatuses Ready %s after the declarations\n", len(want), since(start))
	timed("First deployment to all Ready", start)
	if err := d.printFleet(ctx); err != nil {
		return err
	}
	if d.nodes > 0 {
		d.step("Health: waiting for every service set to be Healthy (its Deployments Available on the simulated nodes)")
		start = time.Now()
		if err := d.waitHealthy(ctx); err != nil {
			return err
		}
		timed("Every service set Healthy", start)
	}

	d.step("Reading back from each target cluster what Holdfast put there")
	start = time.Now()
	if err := d.printTargets(ctx); err != nil {
		return err
	}
	timed("Reading back from the targets", start)

	d.step("Change: adding %s=%s to the ConfigMap of ServiceTemplate %s/%s", webChangeKey, webChangeValue, demoTemplateNamespace, webTemplate)
	start = time.Now()
	if err := d.rollOutChange(ctx); err != nil {
		return err
	}
	timed("Template change on every cluster", start)

	d.step("Selection: promoting MultiClusterService %s from %s=%s to %s=%s", canarySet, envLabel, canaryStartEnv, envLabel, canaryPromotionEnv)
	start = time.Now()
	if err := d.promoteCanary(ctx); err != nil {
		return err
	}
	timed("Selector change (add one cluster, withdraw another)", start)
	return d.printFleet(ctx)
}

// startChartServers serves the hello chart from a loopback HTTP chart repository and a loopback
// OCI registry.
func (d *serviceDemo) startChartServers() error {
	tgz, err := chartserver.Hello(demoChartVersion)
	if err != nil {
		return fmt.Errorf("packaging the hello chart: %w", err)
	}
	d.repo = chartserver.NewRepo()
	if err := d.repo.Add(tgz); err != nil {
		return fmt.Errorf("adding the hello chart to the chart repository: %w", err)
	}
	if d.registry, err = chartserver.NewRegistry(); err != nil {
		return err
	}
	if d.chartRef, err = d.registry.Push(tgz); err != nil {
		return fmt.Errorf("pushing the hello chart to the OCI registry: %w", err)
	}
	return nil
}

// close stops the chart servers.
func (d *serviceDemo) close() {
	if d.repo != nil {
		d.repo.Close()
	}
	if d.registry != nil {
		d.registry.Close()
	}
}

// declare creates the template namespace, the ServiceTemplates and the MultiClusterServices, and
// says what each one is.
func (d *serviceDemo) declare(ctx context.Context, repoURL, registryURL string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: demoTemplateNamespace}}
	if err := d.hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Namespace %s on the hub: %w", demoTemplateNamespace, err)
	}
	tw := tabwriter.NewWriter(d.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tWHAT")
	for _, t := range demoTemplates(repoURL, registryURL) {
		if err := d.hub.Create(ctx, t); err != nil {
			return fmt.Errorf("creating ServiceTemplate %s/%s: %w", t.Namespace, t.Name, err)
		}
		what := "inline manifests (Namespace, ConfigMap, Deployment), Go-templated with the cluster"
		if h := t.Spec.Helm; h != nil {
			what = fmt.Sprintf("Helm chart %s %s from %s", h.Chart, h.Version, h.RepoURL)
		}
		fmt.Fprintf(tw, "ServiceTemplate\t%s/%s\t%s\n", t.Namespace, t.Name, what)
	}
	for _, m := range demoServiceSets() {
		if err := d.hub.Create(ctx, m); err != nil {
			return fmt.Errorf("creating MultiClusterService %s: %w", m.Name, err)
		}
		services := make([]string, 0, len(m.Spec.Services))
		for _, s := range m.Spec.Services {
			services = append(services, fmt.Sprintf("%s (%s -> ns %s)", s.Name, s.Template.Name, s.Namespace))
		}
		fmt.Fprintf(tw, "MultiClusterService\t%s\tclusters %s: %s; syncMode %s\n", m.Name, fleetview.SelectorString(m.Spec.ClusterSelector), strings.Join(services, ", "), m.Spec.SyncMode)
	}
	return tw.Flush()
}

// expectedStatuses names the ClusterServiceStatuses the sample fleet should have with the
// canary on the clusters canary selects: the apps on every sandbox cluster, plus the canary.
func (d *serviceDemo) expectedStatuses(canary holdfastv1.ClusterSelector) []string {
	var names []string
	for i := range d.clusters {
		names = append(names, naming.StatusName(appsSet, d.clusters[i].Name))
	}
	for i := range d.clusters {
		if selects(canary, &d.clusters[i]) {
			names = append(names, naming.StatusName(canarySet, d.clusters[i].Name))
		}
	}
	return names
}

func selects(sel holdfastv1.ClusterSelector, c *holdfastv1.Cluster) bool {
	s, err := metav1.LabelSelectorAsSelector(&sel.LabelSelector)
	return err == nil && s.Matches(labels.Set(c.Labels))
}

// waitStatuses waits until every status in ready exists and is Ready for the current generation
// of its MultiClusterService, every status in gone is deleted, and every MultiClusterService's
// summary is up to date. It prints progress whenever it changes.
func (d *serviceDemo) waitStatuses(ctx context.Context, ready, gone []string) error {
	return d.poll(ctx, func(ctx context.Context) (bool, string, error) {
		statuses, sets, err := d.readStatuses(ctx)
		if err != nil {
			return false, "", err
		}
		done := true
		var progress []string
		for _, name := range ready {
			css, ok := statuses[name]
			state := "not created yet"
			if ok {
				state = readyString(css)
				m, found := sets[css.Spec.MultiClusterService]
				if !found || css.Status.ObservedServiceSetGeneration != m.Generation {
					state += " (reconciling)"
					done = false
				}
			}
			if !ok || !conditions.IsTrue(css, holdfastv1.ReadyCondition) {
				done = false
			}
			progress = append(progress, name+": "+state)
		}
		for _, name := range gone {
			if css, ok := statuses[name]; ok {
				done = false
				state := "withdrawing"
				if css.DeletionTimestamp.IsZero() {
					state = readyString(css)
				}
				progress = append(progress, name+": "+state)
			} else {
				progress = append(progress, name+": gone")
			}
		}
		for _, m := range sets {
			// A set that matches no cluster (--clusters 1 after the promotion) is not Ready, and settled.
			settled := m.Status.ObservedGeneration == m.Generation && m.Status.ReadyClusters == m.Status.MatchingClusters
			if !settled || (m.Status.MatchingClusters > 0 && !conditions.IsTrue(m, holdfastv1.ReadyCondition)) {
				done = false
			}
		}
		return done, strings.Join(progress, ", "), nil
	})
}

// poll calls check until it reports done, printing its progress line whenever it changes. On
// timeout it prints every ClusterServiceStatus's conditions, so what went wrong is on screen.
func (d *serviceDemo) poll(ctx context.Context, check func(context.Context) (bool, string, error)) error {
	start, last := time.Now(), ""
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, d.timeout, true, func(ctx context.Context) (bool, error) {
		done, progress, err := check(ctx)
		if err != nil {
			lastErr = err
			return false, nil // the hub or a target may be busy; keep polling until the timeout
		}
		if progress != last {
			fmt.Fprintf(d.out, "  %6s  %s\n", since(start), progress)
			last = progress
		}
		return done, nil
	})
	if err == nil {
		return nil
	}
	if ctx.Err() == nil {
		fmt.Fprintf(d.out, "\nGave up after %s. Conditions of every ClusterServiceStatus:\n", d.timeout)
		if derr := d.printStatusDetails(context.WithoutCancel(ctx)); derr != nil {
			err = errors.Join(err, derr)
		}
	}
	return errors.Join(fmt.Errorf("waiting for the sample fleet (conditions above): %w", err), lastErr)
}

func (d *serviceDemo) readStatuses(ctx context.Context) (map[string]*holdfastv1.ClusterServiceStatus, map[string]*holdfastv1.MultiClusterService, error) {
	cssList := &holdfastv1.ClusterServiceStatusList{}
	if err := d.hub.List(ctx, cssList, client.InNamespace(d.f.Namespace)); err != nil {
		return nil, nil, fmt.Errorf("listing ClusterServiceStatuses: %w", err)
	}
	mcsList := &holdfastv1.MultiClusterServiceList{}
	if err := d.hub.List(ctx, mcsList); err != nil {
		return nil, nil, fmt.Errorf("listing MultiClusterServices: %w", err)
	}
	statuses := map[string]*holdfastv1.ClusterServiceStatus{}
	for i := range cssList.Items {
		statuses[cssList.Items[i].Name] = &cssList.Items[i]
	}
	sets := map[string]*holdfastv1.MultiClusterService{}
	for i := range mcsList.Items {
		sets[mcsList.Items[i].Name] = &mcsList.Items[i]
	}
	return statuses, sets, nil
}

// printFleet prints one row per (cluster, service set, service), then the service sets.
func (d *serviceDemo) printFleet(ctx context.Context) error {
	statuses, sets, err := d.readStatuses(ctx)
	if err != nil {
		return err
	}
	order := map[string]int{}
	for i := range d.clusters {
		order[d.clusters[i].Name] = i
	}
	list := make([]*holdfastv1.ClusterServiceStatus, 0, len(statuses))
	for _, css := range statuses {
		list = append(list, css)
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if order[a.Spec.Cluster] != order[b.Spec.Cluster] {
			return order[a.Spec.Cluster] < order[b.Spec.Cluster]
		}
		return a.Spec.MultiClusterService < b.Spec.MultiClusterService
	})
	fmt.Fprintln(d.out)
	if err := fleetview.PrintServiceStatuses(d.out, list, time.Now()); err != nil {
		return err
	}
	names := make([]string, 0, len(sets))
	for name := range sets {
		names = append(names, name)
	}
	sort.Strings(names)
	ordered := make([]*holdfastv1.MultiClusterService, 0, len(names))
	for _, name := range names {
		ordered = append(ordered, sets[name])
	}
	fmt.Fprintln(d.out)
	return fleetview.PrintServiceSets(d.out, ordered)
}

// printStatusDetails prints every condition and every object not in sync of every
// ClusterServiceStatus, for when the fleet does not become Ready.
func (d *serviceDemo) printStatusDetails(ctx context.Context) error {
	statuses, _, err := d.readStatuses(ctx)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(statuses))
	for name := range statuses {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		css := statuses[name]
		fmt.Fprintf(d.out, "%s/%s (observedServiceSetGeneration %d)\n", css.Namespace, css.Name, css.Status.ObservedServiceSetGeneration)
		if len(css.Status.Conditions) == 0 {
			fmt.Fprintln(d.out, "  no conditions yet")
		}
		for _, c := range css.Status.Conditions {
			fmt.Fprintf(d.out, "  %s=%s reason=%s message=%q\n", c.Type, c.Status, c.Reason, c.Message)
		}
		for _, r := range css.Status.Resources {
			if r.State != holdfastv1.ResourceInSync {
				fmt.Fprintf(d.out, "  %s %s/%s (service %s): %s %s\n", r.Kind, r.Namespace, r.Name, r.Service, r.State, r.Message)
			}
		}
	}
	return nil
}

// readyString is "Ready" or the Ready condition's reason.
func readyString(obj conditions.Getter) string {
	c := conditions.Get(obj, holdfastv1.ReadyCondition)
	switch {
	case c == nil:
		return "no conditions yet"
	case c.Status == metav1.ConditionTrue:
		return "Ready"
	default:
		return string(c.Status) + " (" + c.Reason + ")"
	}
}

func since(t time.Time) string { return fleetview.RoundDuration(time.Since(t)).String() }

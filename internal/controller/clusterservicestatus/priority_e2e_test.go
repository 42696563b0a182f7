package clusterservicestatus_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
)

// patchesSince returns the PATCH requests the controller sent to cluster since t, oldest first.
func patchesSince(cluster string, t time.Time) []sentRequest {
	var out []sentRequest
	sentRequests.Range(func(k, _ any) bool {
		if r := k.(*sentRequest); r.cluster == cluster && r.method == "PATCH" && !r.at.Before(t) {
			out = append(out, *r)
		}
		return true
	})
	slices.SortFunc(out, func(a, b sentRequest) int { return a.at.Compare(b.at) })
	return out
}

// queueCounts reads the status controller's holdfast_reconciles_total{trigger} and the number
// of holdfast_queue_wait_seconds{priority} observations.
func queueCounts(g Gomega, trigger, priority string) (reconciles float64, waits uint64) {
	reconciles = metricSeries(g, "holdfast_reconciles_total", map[string]string{"controller": "clusterservicestatus", "trigger": trigger}).GetCounter().GetValue()
	waits = metricSeries(g, "holdfast_queue_wait_seconds", map[string]string{"controller": "clusterservicestatus", "priority": priority}).GetHistogram().GetSampleCount()
	return reconciles, waits
}

// TestDriftGoesBeforeRoutineWork: with one worker, a change of the Cluster's labels brings every
// service set of the cluster to a reconcile that applies (routine work, queued first); a drift
// seen meanwhile is corrected before most of them, not after all of them.
func TestDriftGoesBeforeRoutineWork(t *testing.T) {
	restartManagerWith(t, func(o *controller.Options) { o.Concurrency = 1 })
	name, ns := objName(t, ""), objName(t, "ns")
	label := "wave-" + name
	const routine = 30
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	var sets []string
	for i := range routine {
		set := fmt.Sprintf("%s-r%d", name, i)
		sets = append(sets, set)
		inline := configMaps(fmt.Sprintf("%s-r%d", ns, i), "a") + fmt.Sprintf("  wave: '{{ index .Cluster.Labels %q }}'\n", label)
		createTemplate(t, set, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: inline})
		createServiceSet(t, set, holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuous,
			Services: []holdfastv1.Service{service("web", set, fmt.Sprintf("%s-r%d", ns, i))},
		})
	}
	expectReady(t, name, "cluster-1")
	for _, set := range sets {
		expectReady(t, set, "cluster-1")
	}
	t.Cleanup(func() { setClusterLabel(t, "cluster-1", label, "") })

	t.Log("A label change brings every service set of cluster-1 to a reconcile; a drift while they run")
	start := time.Now()
	setClusterLabel(t, "cluster-1", label, "2")
	routinePatch := func(r sentRequest) bool {
		return strings.Contains(r.path, "/namespaces/"+ns+"-r") && strings.HasSuffix(r.path, "/configmaps/a")
	}
	// Polled closely: the drift should come while most routine reconciles still wait.
	NewWithT(t).Eventually(func() bool { return slices.ContainsFunc(patchesSince("cluster-1", start), routinePatch) }).
		WithTimeout(timeout).WithPolling(2*time.Millisecond).Should(BeTrue(), "no routine reconcile applied")
	edited := time.Now()
	driftReconciles, driftWaits := queueCounts(NewWithT(t), "drift", "100")
	editConfigMap(t, "cluster-1", ns, "a", "kubectl-edit", "cluster", "edited-by-hand")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		for i := range routine {
			g.Expect(getConfigMap(g, "cluster-1", fmt.Sprintf("%s-r%d", ns, i), "a").Data).To(HaveKeyWithValue("wave", "2"))
		}
	})

	patches := patchesSince("cluster-1", start)
	correction := slices.IndexFunc(patches, func(r sentRequest) bool {
		return r.path == "/api/v1/namespaces/"+ns+"/configmaps/a" && r.at.After(edited)
	})
	NewWithT(t).Expect(correction).To(BeNumerically(">=", 0), "no correction sent")
	before, after := 0, 0
	for i, r := range patches {
		switch {
		case !routinePatch(r):
		case i < correction:
			before++
		default:
			after++
		}
	}
	t.Logf("routine applies before the correction: %d, after: %d", before, after)
	reconciles, waits := queueCounts(NewWithT(t), "drift", "100")
	NewWithT(t).Expect(reconciles-driftReconciles).To(BeNumerically(">=", 1), "the correction's reconcile was not counted as brought by drift")
	NewWithT(t).Expect(waits-driftWaits).To(BeNumerically(">=", 1), "the correction's wait in the queue was not observed at the drift priority")
	NewWithT(t).Expect(after).To(BeNumerically(">=", routine/3), "the correction waited behind routine work (%d of %d before it)", before, before+after)
}

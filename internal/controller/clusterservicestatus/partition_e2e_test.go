package clusterservicestatus_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
)

// Short partitions: the link to a cluster is cut for less than the connection grace, so the
// Cluster stays Connected, and cut the way networks cut links — the controller's open
// connections hang with no error and no reset, new ones are refused.
const (
	partitionLength = 12 * time.Second
	// partitionGrace keeps the Cluster Connected through the cut.
	partitionGrace = 30 * time.Second
	// The HTTP/2 health check gives up a dead connection 5s after its last frame: the cut
	// outlasts it, as the 30s cut of issue 11 outlasts the 15s of the defaults.
	partitionReadIdle = 3 * time.Second
	partitionPing     = 2 * time.Second
	// correctionBound is how soon after the link returns drift made during the cut must be
	// corrected.
	correctionBound = 5 * time.Second
	// watchBound is how soon after the link returns the watches must work again: their
	// informers list and watch again after a backoff that grew during the cut, up to client-go's
	// reflector's cap of 30s with its jitter of 100% (a wait of up to 60s; 30s was seen exceeded
	// on a loaded CI machine). A watch left on the dead connection would stay dead until the
	// connection is given up.
	watchBound = 60 * time.Second
)

// TestDriftDuringShortPartitionIsCorrectedPromptly: an edit and a deletion made on a cluster
// while its link is black-holed are corrected within seconds of the link coming back, with
// their drift records, although the Cluster never stopped being Connected and the watches
// open at the cut never deliver another event; and the watches work again afterwards.
func TestDriftDuringShortPartitionIsCorrectedPromptly(t *testing.T) {
	restartManagerWith(t, func(o *controller.Options) {
		o.ConnectionGrace = partitionGrace
		o.TargetReadIdleTimeout, o.TargetPingTimeout = partitionReadIdle, partitionPing
	})
	t.Cleanup(func() { closeHoled("cluster-1") })
	name, ns := deployWatched(t, "dev", "cluster-1")

	t.Log("The watches are open: an edit before the cut is seen as it happens")
	editConfigMap(t, "cluster-1", ns, "a", "kubectl-edit", "cluster", "changed-before")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		g.Expect(statusOf(g, name, "cluster-1").Status.Drifts).To(ContainElement(And(HaveField("Name", "a"),
			HaveField("Detection", holdfastv1.DriftDetectedByWatch), HaveField("CorrectedTime", Not(BeNil())))))
	})

	holed := blackHole("cluster-1")
	t.Cleanup(func() { restoreLink("cluster-1") })
	cut := time.Now()
	t.Logf("Link to cluster-1 black-holed (%d open connection(s) hang)", holed)
	editConfigMap(t, "cluster-1", ns, "b", "kubectl-edit", "cluster", "changed-during-partition")
	deleteOutOfBand(t, "cluster-1", ns, "a")
	consistently(t, partitionLength-time.Since(cut), func(g Gomega) {
		c := &holdfastv1.Cluster{}
		g.Expect(hub.Get(context.Background(), clusterKey("cluster-1"), c)).To(Succeed())
		g.Expect(condition(c.Status.Conditions, holdfastv1.ClusterConnectedCondition).Status).To(Equal(metav1.ConditionTrue),
			"the cut is shorter than the connection grace")
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data).To(HaveKeyWithValue("cluster", "changed-during-partition"),
			"the controller reached the cluster during the cut")
	})

	restoreLink("cluster-1")
	back := time.Now()
	NewWithT(t).Eventually(func(g Gomega) {
		getConfigMap(g, "cluster-1", ns, "a")
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "b"), HaveField("Manager", "kubectl-edit"),
			HaveField("Fields", ContainElement(holdfastv1.FieldChange{Path: ".data.cluster", Old: `"cluster-1"`, New: `"changed-during-partition"`})),
			HaveField("CorrectedTime", Not(BeNil())))))
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "a"), HaveField("Type", holdfastv1.DriftDeleted),
			HaveField("CorrectedTime", Not(BeNil())))))
	}).WithTimeout(correctionBound).WithPolling(100*time.Millisecond).Should(Succeed(),
		"drift made during a %s cut not corrected within %s of the link returning", partitionLength, correctionBound)
	t.Logf("Corrected %s after the link returned (cut %s)", time.Since(back).Round(10*time.Millisecond), back.Sub(cut).Round(10*time.Millisecond))
	for _, d := range statusOf(NewWithT(t), name, "cluster-1").Status.Drifts {
		t.Logf("%s %s %s by %q found by %s", d.Type, d.Kind, d.Name, d.Manager, d.Detection)
	}

	t.Log("The watches work again: an edit after the link returned is seen as it happens")
	// Once the reconciles the link's return brought are done (a comparison under way would find
	// the edit before the watch does).
	statusSettled(t, name, "cluster-1", 2*time.Second)
	editConfigMap(t, "cluster-1", ns, "b", "late-edit", "cluster", "changed-after")
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		g.Expect(statusOf(g, name, "cluster-1").Status.Drifts).To(ContainElement(And(HaveField("Name", "b"),
			HaveField("Manager", "late-edit"), HaveField("Detection", holdfastv1.DriftDetectedByWatch), HaveField("CorrectedTime", Not(BeNil())))))
	}).WithTimeout(watchBound).WithPolling(100*time.Millisecond).Should(Succeed(), "the watches did not resume")
	t.Logf("Watched again %s after the link returned", time.Since(back).Round(10*time.Millisecond))
}

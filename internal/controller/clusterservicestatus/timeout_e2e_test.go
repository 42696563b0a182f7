package clusterservicestatus_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
)

// TestHangingTargetHoldsNoWorker: a target that never answers a write holds a worker only until
// the reconcile timeout. With a single worker, the other cluster of the same service set is
// still deployed while the first hangs; and the reconcile that timed out is retried, not
// dropped, so the hanging cluster is deployed once it answers again.
func TestHangingTargetHoldsNoWorker(t *testing.T) {
	restartManagerWith(t, func(o *controller.Options) {
		o.Concurrency, o.ReconcileTimeout = 1, 3*time.Second
	})
	hanging.Store("cluster-2", true)
	t.Cleanup(func() { hanging.Delete("cluster-2") })

	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv(""), SyncMode: holdfastv1.SyncModeContinuous,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	t.Log("cluster-2 hangs on every write; cluster-1 is deployed all the same")
	expectReady(t, name, "cluster-1")
	consistently(t, 3*time.Second, func(g Gomega) {
		expectNoConfigMap(g, "cluster-2", ns, "a")
	})

	t.Log("cluster-2 answers again: the timed-out reconcile was retried")
	hanging.Delete("cluster-2")
	expectReady(t, name, "cluster-2")
}

// hungWritesOf is how many writes cluster's hanging API server has held so far.
func hungWritesOf(cluster string) int64 {
	if n, ok := hungWrites.Load(cluster); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// TestUnresponsiveTargetHoldsOneWorkerAtMost: a target that answers probes but lets every write
// time out. Once one write timed out, its status objects stop sending (their requests would
// fail at once): they say ClusterUnresponsive and wait for the backoff, then try one request at
// a time. With two workers and four service sets, the healthy cluster is deployed while the
// other holds no worker; before, each of its reconciles held one for a whole request timeout,
// again and again.
func TestUnresponsiveTargetHoldsOneWorkerAtMost(t *testing.T) {
	restartManagerWith(t, func(o *controller.Options) {
		o.Concurrency, o.TargetRequestTimeout = 2, time.Second
	})
	hanging.Store("cluster-2", true)
	t.Cleanup(func() { hanging.Delete("cluster-2") })
	before := hungWritesOf("cluster-2")

	name, ns := objName(t, ""), objName(t, "ns")
	var sets []string
	for i := range 4 {
		set := fmt.Sprintf("%s-%d", name, i)
		sets = append(sets, set)
		createTemplate(t, set, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(fmt.Sprintf("%s-%d", ns, i), "a")})
		createServiceSet(t, set, holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: selectEnv(""), SyncMode: holdfastv1.SyncModeContinuous,
			Services: []holdfastv1.Service{service("web", set, fmt.Sprintf("%s-%d", ns, i))},
		})
	}
	for _, set := range sets {
		expectReady(t, set, "cluster-1")
	}
	eventually(t, func(g Gomega) {
		for _, set := range sets {
			ready := condition(statusOf(g, set, "cluster-2").Status.Conditions, holdfastv1.ReadyCondition)
			g.Expect(ready.Reason).To(Equal(holdfastv1.ClusterUnresponsiveReason), "Ready of %s on cluster-2: %s", set, ready.Message)
			g.Expect(ready.Message).To(ContainSubstring("let requests time out"))
		}
	})
	// The first backoff is 10 s: within it, no more writes are sent after those that opened it.
	held := hungWritesOf("cluster-2")
	consistently(t, 5*time.Second, func(g Gomega) {
		g.Expect(hungWritesOf("cluster-2")).To(Equal(held), "writes sent to an unresponsive cluster")
	})
	t.Logf("writes held by the hanging cluster: %d", held-before)
	NewWithT(t).Expect(held-before).To(BeNumerically("<=", 2), "each of cluster-2's reconciles held a worker for a request timeout")

	t.Log("cluster-2 answers again: the next try closes the breaker and everything is deployed")
	hanging.Delete("cluster-2")
	for _, set := range sets {
		expectReady(t, set, "cluster-2")
	}
}

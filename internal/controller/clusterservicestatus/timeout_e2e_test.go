package clusterservicestatus_test

import (
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
		o.Concurrency, o.ReconcileTimeout = 1, 2*time.Second
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

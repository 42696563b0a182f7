package clusterservicestatus_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/naming"
)

// inventoryTimeout is how long a deploy, prune or withdrawal of a thousand objects may take on a
// busy shared machine: generous, not a measure.
const inventoryTimeout = 5 * time.Minute

// manyConfigMaps declares a Namespace and n ConfigMaps cm-00000… in it.
func manyConfigMaps(ns string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns)
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%05d, namespace: %s}\ndata: {value: v%d}\n", i, ns, i)
	}
	return b.String()
}

// shardsOf lists the inventory shards of a status object on the hub, by name.
func shardsOf(g Gomega, statusName string) map[string]holdfastv1.ClusterServiceInventory {
	list := &holdfastv1.ClusterServiceInventoryList{}
	g.Expect(hub.List(context.Background(), list, client.InNamespace(clusterNamespace),
		client.MatchingLabels{holdfastv1.StatusLabel: naming.LabelValue(statusName)})).To(Succeed())
	out := map[string]holdfastv1.ClusterServiceInventory{}
	for _, sh := range list.Items {
		out[sh.Name] = sh
	}
	return out
}

// expectSharded checks that the status object keeps its inventory of n entries in the shards it
// names, each owned by it, and lists in status.resources no InSync entry.
func expectSharded(g Gomega, css *holdfastv1.ClusterServiceStatus, n int) map[string]holdfastv1.ClusterServiceInventory {
	g.Expect(css.Status.ResourceCount).To(BeEquivalentTo(n))
	g.Expect(css.Status.InSyncCount).To(BeEquivalentTo(n))
	g.Expect(css.Status.Inventory).NotTo(BeNil(), "inventory of %d entries not sharded", n)
	g.Expect(css.Status.Resources).To(BeEmpty(), "a sharded status object lists only entries not InSync")
	shards := shardsOf(g, css.Name)
	total, names := 0, map[string]bool{}
	for i, name := range css.Status.Inventory.Names {
		names[name] = true
		sh, ok := shards[name]
		g.Expect(ok).To(BeTrue(), "shard %s missing", name)
		g.Expect(sh.Spec.Shard).To(BeEquivalentTo(i))
		g.Expect(sh.OwnerReferences).To(ContainElement(HaveField("UID", css.UID)))
		total += len(sh.Spec.Resources)
	}
	g.Expect(total).To(Equal(n), "entries in the shards")
	for name := range shards {
		g.Expect(names).To(HaveKey(name), "stale shard %s left", name)
	}
	return shards
}

// TestShardedInventory: with a shard size of 64 (instead of 1,000), a service set of 1,000
// ConfigMaps keeps its inventory in 16 ClusterServiceInventory shards, and everything that reads
// the inventory works across them: deploy, a drift correction (the object's entry and every shard
// stay as they were), prune of objects a new revision dropped, and withdrawal. A missing shard
// stops the withdrawal — an incomplete inventory would forget objects — until it is back.
func TestShardedInventory(t *testing.T) {
	restartManagerWith(t, func(o *controller.Options) { o.InventoryShardSize = 64 })
	name, ns := objName(t, ""), objName(t, "ns")
	ctx := context.Background()
	const n = 1000
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: manyConfigMaps(ns, n)})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	slow := func(f func(g Gomega), msg ...any) {
		t.Helper()
		NewWithT(t).Eventually(f).WithTimeout(inventoryTimeout).WithPolling(time.Second).Should(Succeed(), msg...)
	}

	// Deploy.
	var shards map[string]holdfastv1.ClusterServiceInventory
	var css *holdfastv1.ClusterServiceStatus
	slow(func(g Gomega) {
		css = statusOf(g, name, "cluster-1")
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue), "%+v", css.Status.Conditions)
		shards = expectSharded(g, css, n+1)
	}, "deploying 1,001 objects")
	NewWithT(t).Expect(css.Status.Inventory.Names).To(HaveLen(16))
	eventually(t, func(g Gomega) { getConfigMap(g, "cluster-1", ns, "cm-00999") })

	// Drift corrections: the object's entry does not change, nor does any shard (TestSaveWritesOnlyChangedShards
	// checks that Save writes only the shards that change: the API server keeps an update that
	// changes nothing at its resourceVersion). Once the deploy has settled (the first edit may
	// meet the full reconcile that follows it), a correction is recorded reading only the shard
	// holding its entry (inventory_part.go), and the counts stay whole.
	for i, object := range []string{"cm-00500", "cm-00501"} {
		parts := inventoryReads(NewWithT(t), metrics.InventoryPart)
		cm := getConfigMap(NewWithT(t), "cluster-1", ns, object)
		cm.Data["value"] = "edited"
		NewWithT(t).Expect(targets["cluster-1"].Update(ctx, cm)).To(Succeed())
		slow(func(g Gomega) {
			g.Expect(getConfigMap(g, "cluster-1", ns, object).Data).To(HaveKeyWithValue("value", "v"+strings.TrimPrefix(object, "cm-00")))
			css = statusOf(g, name, "cluster-1")
			g.Expect(css.Status.Drifts).NotTo(BeEmpty())
			g.Expect(css.Status.Drifts[0].Name).To(Equal(object))
			g.Expect(css.Status.Drifts[0].CorrectedTime).NotTo(BeNil())
		}, "correcting an edit of %s", object)
		if i > 0 {
			NewWithT(t).Expect(inventoryReads(NewWithT(t), metrics.InventoryPart)).To(BeNumerically(">", parts),
				"the correction of %s was recorded without reading part of the inventory", object)
		}
		NewWithT(t).Expect(css.Status.ResourceCount).To(BeEquivalentTo(n + 1))
		NewWithT(t).Expect(css.Status.InSyncCount).To(BeEquivalentTo(n + 1))
		NewWithT(t).Expect(condition(css.Status.Conditions, holdfastv1.HealthyCondition).Message).To(Equal(fmt.Sprintf("%d objects healthy", n+1)))
	}
	after := expectSharded(NewWithT(t), css, n+1)
	rewritten := 0
	for name, sh := range after {
		if sh.ResourceVersion != shards[name].ResourceVersion {
			rewritten++
		}
	}
	NewWithT(t).Expect(rewritten).To(BeNumerically("<=", 1), "a correction of one object rewrote %d shards", rewritten)

	// Prune: a revision without the last 100 ConfigMaps.
	updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) { tpl.Spec.Inline = manyConfigMaps(ns, n-100) })
	slow(func(g Gomega) {
		for i := n - 100; i < n; i += 9 {
			expectNoConfigMap(g, "cluster-1", ns, fmt.Sprintf("cm-%05d", i))
		}
		css = statusOf(g, name, "cluster-1")
		shards = expectSharded(g, css, n-100+1)
	}, "pruning 100 objects")
	getConfigMap(NewWithT(t), "cluster-1", ns, "cm-00000")

	// A missing shard stops the withdrawal, and says so.
	lost := shards[css.Status.Inventory.Names[3]]
	NewWithT(t).Expect(hub.Delete(ctx, &lost)).To(Succeed())
	NewWithT(t).Expect(hub.Delete(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	slow(func(g Gomega) {
		css = statusOf(g, name, "cluster-1")
		g.Expect(css.DeletionTimestamp).NotTo(BeNil())
		applied := condition(css.Status.Conditions, holdfastv1.AppliedCondition)
		g.Expect(applied.Reason).To(Equal(holdfastv1.InventoryIncompleteReason), "%+v", css.Status.Conditions)
		g.Expect(applied.Message).To(ContainSubstring(lost.Name))
	}, "reporting the missing shard")
	consistently(t, 3*time.Second, func(g Gomega) {
		getConfigMap(g, "cluster-1", ns, "cm-00000")
		getConfigMap(g, "cluster-1", ns, "cm-00899")
		g.Expect(statusOf(g, name, "cluster-1").Finalizers).To(ContainElement(holdfastv1.CleanupFinalizer))
	}, "withdrawn from an incomplete inventory")

	// Restored, the withdrawal goes on: every object, in every shard, is deleted, and the shards go.
	restored := &holdfastv1.ClusterServiceInventory{ObjectMeta: metav1.ObjectMeta{Namespace: lost.Namespace, Name: lost.Name,
		Labels: lost.Labels, OwnerReferences: lost.OwnerReferences}, Spec: lost.Spec}
	NewWithT(t).Expect(hub.Create(ctx, restored)).To(Succeed())
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		if css.Annotations == nil {
			css.Annotations = map[string]string{}
		}
		css.Annotations[holdfastv1.ReconcileRequestedAtAnnotation] = "restored"
		g.Expect(hub.Update(ctx, css)).To(Succeed())
	})
	slow(func(g Gomega) {
		for i := 0; i < n-100; i += 7 {
			expectNoConfigMap(g, "cluster-1", ns, fmt.Sprintf("cm-%05d", i))
		}
		err := hub.Get(ctx, client.ObjectKey{Namespace: clusterNamespace, Name: naming.StatusName(name, "cluster-1")}, &holdfastv1.ClusterServiceStatus{})
		g.Expect(apiNotFound(err)).To(BeTrue(), "status object still there: %v", err)
		g.Expect(shardsOf(g, naming.StatusName(name, "cluster-1"))).To(BeEmpty())
	}, "withdrawing 901 objects from a sharded inventory")
	left := &corev1.ConfigMapList{}
	NewWithT(t).Expect(targets["cluster-1"].List(ctx, left, client.InNamespace(ns), client.MatchingLabels{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue})).To(Succeed())
	NewWithT(t).Expect(left.Items).To(BeEmpty())
}

// inventoryReads reads holdfast_inventory_reads_total{read}.
func inventoryReads(g Gomega, read string) float64 {
	return metricSeries(g, "holdfast_inventory_reads_total", map[string]string{"read": read}).GetCounter().GetValue()
}

package apply_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/apply"
)

// claimByOwnerLabel is the Claim a MultiClusterService would use: an object labelled for
// another owner is that owner's.
func claimByOwnerLabel(live *unstructured.Unstructured) (string, bool) {
	owner, ok := live.GetLabels()["holdfast.dev/owner"]
	if !ok || owner == ownerLabels["holdfast.dev/owner"] {
		return "", true
	}
	return owner, false
}

func configMaps(t *testing.T, names ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, n := range names {
		out = append(out, objects(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {k: v}\n", n)...)
	}
	return out
}

func TestPruneDeletesOnlyWhatIsStillOurs(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	a, _ := newApplier(t)
	opts := apply.Options{DefaultNamespace: ns, Labels: ownerLabels, Claim: claimByOwnerLabel, Prune: true}
	res, err := a.Apply(ctx, configMaps(t, "keep", "drop", "relabelled", "claimed"), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Changed).To(Equal(4))

	// Someone takes "relabelled" out of Holdfast's hands, and another owner claims "claimed".
	relabel := func(name string, labels map[string]string) {
		cm := live(t, "v1", "ConfigMap", ns, name)
		cm.SetLabels(labels)
		cm.SetManagedFields(nil)
		g.Expect(admin.Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())
	}
	relabel("relabelled", map[string]string{"app": "mine-now"})
	relabel("claimed", map[string]string{"holdfast.dev/managed-by": "holdfast", "holdfast.dev/owner": "mcs-b"})
	claimedRV := live(t, "v1", "ConfigMap", ns, "claimed").GetResourceVersion()

	opts.Previous = res.Inventory
	res, err = a.Apply(ctx, configMaps(t, "keep"), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{
		"ConfigMap/keep": apply.Unchanged, "ConfigMap/drop": apply.Deleted,
		"ConfigMap/relabelled": apply.Orphaned, "ConfigMap/claimed": apply.Conflict,
	}))
	g.Expect(res.Changed).To(Equal(1))
	claimed, _ := res.Object(apply.Ref{Kind: "ConfigMap", Namespace: ns, Name: "claimed"})
	g.Expect(claimed.ConflictWith).To(Equal("mcs-b"))
	g.Expect(res.Inventory).To(HaveLen(1))
	g.Expect(res.Inventory[0].Name).To(Equal("keep"))
	g.Expect(live(t, "v1", "ConfigMap", ns, "drop")).To(BeNil())
	g.Expect(live(t, "v1", "ConfigMap", ns, "relabelled")).NotTo(BeNil())
	g.Expect(live(t, "v1", "ConfigMap", ns, "claimed").GetResourceVersion()).To(Equal(claimedRV))

	// A declared object another owner holds is a Conflict, left untouched and not inventoried.
	opts.Previous = res.Inventory
	res, err = a.Apply(ctx, configMaps(t, "keep", "claimed"), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{"ConfigMap/keep": apply.Unchanged, "ConfigMap/claimed": apply.Conflict}))
	g.Expect(res.Inventory).To(HaveLen(1))
	g.Expect(live(t, "v1", "ConfigMap", ns, "claimed").GetResourceVersion()).To(Equal(claimedRV))

	// Without Prune, undeclared objects are left in place and no longer managed.
	opts.Previous, opts.Prune = res.Inventory, false
	res, err = a.Apply(ctx, nil, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{"ConfigMap/keep": apply.Orphaned}))
	g.Expect(res.Inventory).To(BeEmpty())
	g.Expect(live(t, "v1", "ConfigMap", ns, "keep")).NotTo(BeNil())
}

func TestDeleteWithdrawsEverything(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	own := ns + "-own"
	group := "delete.test.holdfast.dev"
	cleanupCluster(t, "v1/Namespace/"+own, "apiextensions.k8s.io/v1/CustomResourceDefinition/widgets."+group)
	a, counter := newApplier(t)
	set := objects(t, `
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: %[1]s}
---
apiVersion: %[2]s/v1
kind: Widget
metadata: {name: w}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other}
---
%[3]s
`, own, group, crd(group))
	opts := apply.Options{DefaultNamespace: ns, Labels: ownerLabels, Claim: claimByOwnerLabel}
	res, err := a.Apply(ctx, set, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Err()).NotTo(HaveOccurred())
	inventory := res.Inventory

	// "other" is handed to another owner before the withdrawal.
	other := live(t, "v1", "ConfigMap", ns, "other")
	other.SetLabels(map[string]string{"holdfast.dev/managed-by": "holdfast", "holdfast.dev/owner": "mcs-b"})
	other.SetManagedFields(nil)
	g.Expect(admin.Update(ctx, other)).To(Succeed())

	// A dry run changes nothing.
	counter.reset()
	dry := opts
	dry.DryRun = true
	res, err = a.Delete(ctx, inventory, dry)
	g.Expect(err).NotTo(HaveOccurred())
	_, writes, _ := counter.reset()
	g.Expect(writes).To(BeZero())
	g.Expect(res.Inventory).To(ConsistOf(inventory))
	g.Expect(actions(res)).To(HaveKeyWithValue("Widget/w", apply.WouldDelete))

	res, err = a.Delete(ctx, inventory, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{
		"Widget/w": apply.Deleted, "ConfigMap/a": apply.Deleted, "ConfigMap/other": apply.Conflict,
		"Namespace/" + own: apply.Deleted, "CustomResourceDefinition/widgets." + group: apply.Deleted,
	}))
	// Reverse order: the custom resource and namespaced objects before Namespace and CRD.
	var order []string
	for _, o := range res.Objects {
		order = append(order, o.Kind)
	}
	g.Expect(order[len(order)-2:]).To(Equal([]string{"Namespace", "CustomResourceDefinition"}))
	g.Expect(res.Inventory).To(BeEmpty())
	g.Expect(res.Changed).To(Equal(4))
	g.Expect(live(t, "v1", "ConfigMap", ns, "other")).NotTo(BeNil())
	// Without kube-controller-manager the Namespace stays Terminating; it is being deleted.
	if n := live(t, "v1", "Namespace", "", own); n != nil {
		g.Expect(n.GetDeletionTimestamp()).NotTo(BeNil())
	}
	g.Eventually(func() *unstructured.Unstructured {
		return live(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets."+group)
	}, "30s").Should(BeNil())
}

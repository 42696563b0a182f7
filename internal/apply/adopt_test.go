package apply_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
)

const adoptedMark = "holdfast.dev/adopted"

// lacksOwnerLabel is the Foreign a MultiClusterService would use: Holdfast marks what it
// creates, and what it adopted says so.
func lacksOwnerLabel(live *unstructured.Unstructured) bool {
	return live.GetLabels()["holdfast.dev/managed-by"] != "holdfast" || live.GetAnnotations()[adoptedMark] != ""
}

// createByHand creates a ConfigMap as someone else would, with another field manager.
func createByHand(t *testing.T, ns, name string, labels map[string]string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Data: map[string]string{"k": "theirs"}}
	if err := admin.Create(context.Background(), cm, client.FieldOwner("kubectl-create")); err != nil {
		t.Fatalf("creating ConfigMap %s/%s: %v", ns, name, err)
	}
}

func adoptionOptions(ns string, adopt bool) apply.Options {
	return apply.Options{
		DefaultNamespace: ns, Labels: ownerLabels, Annotations: map[string]string{"holdfast.dev/owner": "mcs-a"},
		ClaimSelector: map[string]string{"holdfast.dev/managed-by": "holdfast"},
		Claim:         claimByOwnerLabel, Foreign: lacksOwnerLabel, Adopt: adopt, AdoptedAnnotation: adoptedMark, Prune: true,
	}
}

// TestForeignObjectsAreLeftAlone: without Adopt, a declared object someone else created is
// reported Conflict (Foreign, naming its field manager) and not written; new objects and
// objects carrying Holdfast's marks are applied as before.
func TestForeignObjectsAreLeftAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createByHand(t, ns, "theirs", nil)
	createByHand(t, ns, "marked", map[string]string{"holdfast.dev/managed-by": "holdfast"})
	before := live(t, "v1", "ConfigMap", ns, "theirs").GetResourceVersion()

	a, counter := newApplier(t)
	counter.reset()
	res, err := a.Apply(ctx, configMaps(t, "theirs", "marked", "new"), adoptionOptions(ns, false))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{
		"ConfigMap/theirs": apply.Conflict, "ConfigMap/marked": apply.Configured, "ConfigMap/new": apply.Created,
	}))
	o, _ := res.Object(apply.Ref{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "theirs"})
	g.Expect(o.Foreign).To(BeTrue())
	g.Expect(o.ConflictWith).To(BeEmpty())
	g.Expect(o.Message).To(ContainSubstring("Holdfast did not create it"))
	g.Expect(o.Message).To(ContainSubstring("kubectl-create"))
	g.Expect(live(t, "v1", "ConfigMap", ns, "theirs").GetResourceVersion()).To(Equal(before), "the foreign object was written")
	g.Expect(res.Inventory).To(HaveLen(2))
	for _, e := range res.Inventory {
		g.Expect(e.Adopted).To(BeFalse(), e.Name)
	}
	_, writes, requests := counter.reset()
	g.Expect(writes).To(Equal(2), "requests: %v", requests)

	// Applied once, an object is Holdfast's: the next apply neither reads it with a GET nor
	// judges it again.
	res, err = a.Apply(ctx, configMaps(t, "marked", "new"), func() apply.Options {
		o := adoptionOptions(ns, false)
		o.Previous = res.Inventory
		return o
	}())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{"ConfigMap/marked": apply.Unchanged, "ConfigMap/new": apply.Unchanged}))
	_, writes, _ = counter.reset()
	g.Expect(writes).To(BeZero())
}

// TestAdoptedObjectsAreNeverDeleted: with Adopt, a foreign object is applied and its entry
// marked Adopted, the mark survives later applies, and pruning or Delete leaves it in place
// without Holdfast's labels and annotation, keeping its data; objects Holdfast created go.
func TestAdoptedObjectsAreNeverDeleted(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createByHand(t, ns, "theirs", map[string]string{"app": "theirs"})
	a, counter := newApplier(t)

	opts := adoptionOptions(ns, true)
	res, err := a.Apply(ctx, configMaps(t, "theirs", "ours"), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{"ConfigMap/theirs": apply.Configured, "ConfigMap/ours": apply.Created}))
	adopted := map[string]bool{}
	for _, e := range res.Inventory {
		adopted[e.Name] = e.Adopted
	}
	g.Expect(adopted).To(Equal(map[string]bool{"theirs": true, "ours": false}))
	cm := live(t, "v1", "ConfigMap", ns, "theirs")
	g.Expect(cm.GetLabels()).To(HaveKeyWithValue("holdfast.dev/managed-by", "holdfast"))
	g.Expect(cm.GetAnnotations()).To(HaveKeyWithValue(adoptedMark, "true"))
	g.Expect(cm.Object["data"]).To(Equal(map[string]any{"k": "v"}))
	g.Expect(live(t, "v1", "ConfigMap", ns, "ours").GetAnnotations()).NotTo(HaveKey(adoptedMark))

	// Declared as before: still adopted, and nothing written.
	opts.Previous = res.Inventory
	_, _, _ = counter.reset()
	res, err = a.Apply(ctx, configMaps(t, "theirs", "ours"), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{"ConfigMap/theirs": apply.Unchanged, "ConfigMap/ours": apply.Unchanged}))
	g.Expect(res.Inventory).To(ContainElement(And(HaveField("Name", "theirs"), HaveField("Adopted", true))))
	_, writes, requests := counter.reset()
	g.Expect(writes).To(BeZero(), "requests: %v", requests)

	// Without this inventory (another caller), the mark says the object is not Holdfast's.
	other, err := a.Apply(ctx, configMaps(t, "theirs"), adoptionOptions(ns, false))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(other)).To(Equal(map[string]apply.Action{"ConfigMap/theirs": apply.Conflict}))

	// A dry run of the prune says what would happen and changes nothing.
	opts.Previous, opts.DryRun = res.Inventory, true
	dry, err := a.Apply(ctx, nil, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(dry)).To(Equal(map[string]apply.Action{"ConfigMap/theirs": apply.Orphaned, "ConfigMap/ours": apply.WouldDelete}))
	g.Expect(dry.Inventory).To(ConsistOf(res.Inventory))

	opts.DryRun = false
	res, err = a.Apply(ctx, nil, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{"ConfigMap/theirs": apply.Orphaned, "ConfigMap/ours": apply.Deleted}))
	g.Expect(res.Inventory).To(BeEmpty())
	g.Expect(live(t, "v1", "ConfigMap", ns, "ours")).To(BeNil())
	cm = live(t, "v1", "ConfigMap", ns, "theirs")
	g.Expect(cm).NotTo(BeNil(), "the adopted object was deleted")
	g.Expect(cm.GetLabels()).To(Equal(map[string]string{"app": "theirs"}))
	g.Expect(cm.GetAnnotations()).NotTo(HaveKey("holdfast.dev/owner"))
	g.Expect(cm.GetAnnotations()).NotTo(HaveKey(adoptedMark))
	g.Expect(cm.Object["data"]).To(Equal(map[string]any{"k": "v"}))

	// Let go, it is foreign again.
	res, err = a.Apply(ctx, configMaps(t, "theirs"), adoptionOptions(ns, false))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{"ConfigMap/theirs": apply.Conflict}))

	// Delete (withdrawal) lets adopted objects go too.
	res, err = a.Apply(ctx, configMaps(t, "theirs"), adoptionOptions(ns, true))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Inventory).To(ConsistOf(HaveField("Adopted", true)))
	res, err = a.Delete(ctx, res.Inventory, adoptionOptions(ns, true))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{"ConfigMap/theirs": apply.Orphaned}))
	g.Expect(res.Inventory).To(BeEmpty())
	g.Expect(live(t, "v1", "ConfigMap", ns, "theirs").GetLabels()).To(Equal(map[string]string{"app": "theirs"}))

	// The live mark alone keeps an object from being deleted, whatever the entry says.
	res, err = a.Apply(ctx, configMaps(t, "marked"), adoptionOptions(ns, false))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Inventory).To(ConsistOf(HaveField("Adopted", false)))
	cm = live(t, "v1", "ConfigMap", ns, "marked")
	cm.SetAnnotations(map[string]string{"holdfast.dev/owner": "mcs-a", adoptedMark: "true"})
	g.Expect(admin.Update(ctx, cm, client.FieldOwner("kubectl-annotate"))).To(Succeed())
	res, err = a.Delete(ctx, res.Inventory, adoptionOptions(ns, false))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{"ConfigMap/marked": apply.Orphaned}))
	g.Expect(live(t, "v1", "ConfigMap", ns, "marked")).NotTo(BeNil())
}

// TestCorrectionOfAReplacedObject: a correction (Options.Corrections, no inventory) of an object
// someone deleted and created again by hand, so that Holdfast owns none of its fields, is a drift
// handed to Correct and applied, never taken for an object left as applied.
func TestCorrectionOfAReplacedObject(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createByHand(t, ns, "replaced", nil)

	var asked []string
	opts := apply.Options{DefaultNamespace: ns, Labels: ownerLabels, Corrections: true,
		Correct: func(desired, _ *unstructured.Unstructured, _ drift.Verdict) bool {
			asked = append(asked, desired.GetName())
			return true
		}}
	a, _ := newApplier(t)
	res, err := a.Apply(ctx, configMaps(t, "replaced"), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{"ConfigMap/replaced": apply.Configured}))
	g.Expect(asked).To(Equal([]string{"replaced"}), "the replaced object is a drift for the policy to decide")
	o, _ := res.Object(apply.Ref{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "replaced"})
	g.Expect(o.Drift).To(BeTrue())
}

// TestNewObjectsAreListedNotRead: with a name lister, the new objects of a kind and namespace
// that Foreign must judge are found absent by one List of names, not a GET each; one that exists
// is still read whole and judged foreign.
func TestNewObjectsAreListedNotRead(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createByHand(t, ns, "theirs", nil)

	for _, lister := range []bool{false, true} {
		c, counter, err := newClient(target.RESTConfig())
		g.Expect(err).NotTo(HaveOccurred())
		var opts []apply.Option
		if lister {
			opts = append(opts, apply.WithNameLister(c))
		}
		a := apply.New(c, opts...)
		names := []string{"theirs"}
		for i := range 4 {
			names = append(names, fmt.Sprintf("new-%t-%d", lister, i))
		}
		counter.reset()
		res, err := a.Apply(ctx, configMaps(t, names...), adoptionOptions(ns, false))
		g.Expect(err).NotTo(HaveOccurred())
		counter.mu.Lock()
		gets := counter.gets
		counter.mu.Unlock()
		want := map[string]apply.Action{"ConfigMap/theirs": apply.Conflict}
		for _, n := range names[1:] {
			want["ConfigMap/"+n] = apply.Created
		}
		g.Expect(actions(res)).To(Equal(want), "name lister %t", lister)
		if lister {
			g.Expect(gets).To(ConsistOf(HaveSuffix("/configmaps/theirs")), "with a name lister only the existing object is read")
		} else {
			g.Expect(gets).To(HaveLen(5), "without a name lister every new object is read")
		}
	}
}

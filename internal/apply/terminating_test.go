package apply_test

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"holdfast.dev/holdfast/internal/apply"
)

// TestObjectBeingDeletedIsNotApplied: an object on its way out (deleted, held by a finalizer,
// as a Namespace is while its contents go) is not taken for applied: it fails, transiently,
// saying it is being deleted, and enters no inventory, so its disappearance later is not taken
// for a deletion of something Holdfast applied. Once it is gone it is created.
func TestObjectBeingDeletedIsNotApplied(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	const finalizer = "holdfast.dev/test-hold"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaving", Finalizers: []string{finalizer}}}
	g.Expect(admin.Create(ctx, cm)).To(Succeed())
	g.Expect(admin.Delete(ctx, cm)).To(Succeed())
	g.Expect(live(t, "v1", "ConfigMap", ns, "leaving").GetDeletionTimestamp()).NotTo(BeNil())

	a, _ := newApplier(t)
	opts := apply.Options{DefaultNamespace: ns, Labels: ownerLabels}
	res, err := a.Apply(ctx, configMaps(t, "leaving", "staying"), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{"ConfigMap/leaving": apply.Failed, "ConfigMap/staying": apply.Created}))
	o, _ := res.Object(apply.Ref{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "leaving"})
	g.Expect(errors.Is(o.Err, apply.ErrBeingDeleted)).To(BeTrue(), "error: %v", o.Err)
	g.Expect(o.Transient).To(BeTrue())
	g.Expect(o.Message).To(ContainSubstring("being deleted"))
	g.Expect(o.Applied).To(BeFalse())
	g.Expect(res.Inventory).To(HaveLen(1))
	g.Expect(res.Inventory[0].Name).To(Equal("staying"))

	// Gone, it is created again.
	leaving := live(t, "v1", "ConfigMap", ns, "leaving")
	leaving.SetFinalizers(nil)
	g.Expect(admin.Update(ctx, leaving)).To(Succeed())
	g.Eventually(func() bool { return live(t, "v1", "ConfigMap", ns, "leaving") == nil }, "10s").Should(BeTrue())
	opts.Previous = res.Inventory
	res, err = a.Apply(ctx, configMaps(t, "leaving", "staying"), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{"ConfigMap/leaving": apply.Created, "ConfigMap/staying": apply.Unchanged}))
	g.Expect(live(t, "v1", "ConfigMap", ns, "leaving").GetDeletionTimestamp()).To(BeNil())
}

package apply_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/fieldset"
)

// TestOwnedDigestAgainstTheAPIServer changes a Deployment Holdfast applied in every way another
// actor might, and checks which changes OwnedDigest (and so Apply) notices.
func TestOwnedDigestAgainstTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	a, counter := newApplier(t)
	opts := apply.Options{DefaultNamespace: ns, Labels: ownerLabels}
	res, err := a.Apply(ctx, objects(t, deployment), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Err()).NotTo(HaveOccurred())
	applied := res.Inventory[0].OwnedDigest
	g.Expect(applied).To(HaveLen(2*fieldset.ObjectDigestSize), "an inventory digest")

	key := client.ObjectKey{Namespace: ns, Name: "web"}
	digest := func() string {
		t.Helper()
		d, err := fieldset.OwnedDigest(live(t, "apps/v1", "Deployment", ns, "web"), fieldset.FieldManager)
		g.Expect(err).NotTo(HaveOccurred())
		return d
	}
	edit := func(manager string, mutate func(d *appsv1.Deployment)) {
		t.Helper()
		d := &appsv1.Deployment{}
		g.Expect(admin.Get(ctx, key, d)).To(Succeed())
		mutate(d)
		g.Expect(admin.Update(ctx, d, client.FieldOwner(manager))).To(Succeed())
	}
	// reapply applies the declaration again and returns what happened to the Deployment.
	reapply := func() (apply.Action, int) {
		t.Helper()
		counter.reset()
		opts.Previous = res.Inventory
		res, err = a.Apply(ctx, objects(t, deployment), opts)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Err()).NotTo(HaveOccurred())
		_, writes, _ := counter.reset()
		return res.Objects[0].Action, writes
	}

	// Server defaulting: the live object has many fields Holdfast never set.
	g.Expect(digest()).To(Equal(applied))

	// Status written by a controller.
	d := &appsv1.Deployment{}
	g.Expect(admin.Get(ctx, key, d)).To(Succeed())
	d.Status.Replicas, d.Status.ObservedGeneration = 2, d.Generation
	g.Expect(admin.Status().Update(ctx, d, client.FieldOwner("kube-controller-manager"))).To(Succeed())
	g.Expect(digest()).To(Equal(applied))

	// Another manager injects a sidecar and annotates the object and its template.
	edit("kubectl-edit", func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "proxy:1"})
		d.Annotations = map[string]string{"controller.example.com/seen": "yes"}
		d.Spec.Template.Annotations = map[string]string{"injected": "true"}
	})
	g.Expect(digest()).To(Equal(applied))
	action, writes := reapply()
	g.Expect(action).To(Equal(apply.Unchanged))
	g.Expect(writes).To(BeZero())

	// Another manager changes a value Holdfast owns: the image.
	edit("kubectl-edit", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:2" })
	g.Expect(digest()).NotTo(Equal(applied))
	action, writes = reapply()
	g.Expect(action).To(Equal(apply.Configured))
	g.Expect(writes).To(Equal(1))
	g.Expect(admin.Get(ctx, key, d)).To(Succeed())
	g.Expect(d.Spec.Template.Spec.Containers).To(HaveLen(2), "the sidecar is not Holdfast's to remove")
	g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1"))
	g.Expect(digest()).To(Equal(res.Inventory[0].OwnedDigest))

	// kubectl scale: the scale subresource.
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 5}}
	g.Expect(admin.Get(ctx, key, d)).To(Succeed())
	g.Expect(admin.SubResource("scale").Update(ctx, d, client.WithSubResourceBody(scale), client.FieldOwner("kubectl"))).To(Succeed())
	g.Expect(digest()).NotTo(Equal(res.Inventory[0].OwnedDigest))
	action, _ = reapply()
	g.Expect(action).To(Equal(apply.Configured))
	g.Expect(admin.Get(ctx, key, d)).To(Succeed())
	g.Expect(*d.Spec.Replicas).To(Equal(int32(2)))

	// A label Holdfast set is changed, then removed.
	edit("kubectl-edit", func(d *appsv1.Deployment) { d.Labels["holdfast.dev/owner"] = "someone-else" })
	g.Expect(digest()).NotTo(Equal(res.Inventory[0].OwnedDigest))
	action, _ = reapply()
	g.Expect(action).To(Equal(apply.Configured))
	edit("kubectl-edit", func(d *appsv1.Deployment) { delete(d.Labels, "holdfast.dev/managed-by") })
	g.Expect(digest()).NotTo(Equal(res.Inventory[0].OwnedDigest))
	action, _ = reapply()
	g.Expect(action).To(Equal(apply.Configured))
	g.Expect(admin.Get(ctx, key, d)).To(Succeed())
	g.Expect(d.Labels).To(HaveKeyWithValue("holdfast.dev/managed-by", "holdfast"))
	g.Expect(d.Labels).To(HaveKeyWithValue("holdfast.dev/owner", "mcs-a"))

	// A deleted object is recreated.
	g.Expect(admin.Delete(ctx, d)).To(Succeed())
	action, _ = reapply()
	g.Expect(action).To(Equal(apply.Created))
}

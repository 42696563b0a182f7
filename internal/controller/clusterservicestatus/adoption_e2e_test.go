package clusterservicestatus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// existingYAML declares a Namespace and two ConfigMaps in it: "existing", which the tests create
// on the cluster beforehand, and "new".
func existingYAML(ns string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: existing, namespace: %[1]s}
data: {k: ours}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: new, namespace: %[1]s}
data: {k: ours}
`, ns)
}

// createOnTarget creates, on cluster-1 and as someone else would (field manager kubectl-create),
// a Namespace with a ConfigMap "existing" that the template declares and one, "theirs", that
// it does not. The namespace is deleted when the test ends: Holdfast must not.
func createOnTarget(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	c1 := targets["cluster-1"]
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	NewWithT(t).Expect(c1.Create(ctx, namespace, client.FieldOwner("kubectl-create"))).To(Succeed())
	t.Cleanup(func() { _ = c1.Delete(context.Background(), namespace) })
	for _, name := range []string{"existing", "theirs"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"team": "payments"}},
			Data: map[string]string{"k": "theirs"}}
		NewWithT(t).Expect(c1.Create(ctx, cm, client.FieldOwner("kubectl-create"))).To(Succeed())
	}
}

// expectLeftAlone checks that ConfigMap name in ns on cluster-1 is as createOnTarget made it.
func expectLeftAlone(g Gomega, ns, name string) {
	cm := getConfigMap(g, "cluster-1", ns, name)
	g.Expect(cm.Data).To(Equal(map[string]string{"k": "theirs"}))
	g.Expect(cm.Labels).To(Equal(map[string]string{"team": "payments"}))
	g.Expect(cm.Annotations).NotTo(HaveKey(holdfastv1.OwnerAnnotation))
}

func expectNamespace(g Gomega, ns string) *corev1.Namespace {
	n := &corev1.Namespace{}
	g.Expect(targets["cluster-1"].Get(context.Background(), client.ObjectKey{Name: ns}, n)).To(Succeed())
	g.Expect(n.DeletionTimestamp).To(BeNil(), "namespace %s is being deleted", ns)
	return n
}

// TestAdoptionNeverLeavesExistingObjectsAlone: by default a declared Namespace and ConfigMap
// that already exist on the cluster are not taken over: each is a Conflict that names it and
// says what to do, the ConfigMap keeps its data, and withdrawal deletes only what Holdfast
// created — never the existing Namespace with what is in it. Once someone deletes the existing
// ConfigMap, Holdfast creates its own, which it then withdraws as usual.
func TestAdoptionNeverLeavesExistingObjectsAlone(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	ctx := context.Background()
	createOnTarget(t, ns)
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: existingYAML(ns)})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), Services: []holdfastv1.Service{service("web", name, ns)},
	})

	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		for _, kind := range []string{"Namespace", "ConfigMap"} {
			objName := map[string]string{"Namespace": ns, "ConfigMap": "existing"}[kind]
			rs := resourceNamed(css.Status.Resources, kind, objName)
			g.Expect(rs.State).To(Equal(holdfastv1.ResourceConflict), "%s: %+v", kind, css.Status.Resources)
			g.Expect(rs.ConflictWith).To(BeEmpty())
			g.Expect(rs.Message).To(ContainSubstring("Holdfast did not create it"))
			g.Expect(rs.Message).To(ContainSubstring("kubectl-create"))
			g.Expect(rs.Message).To(ContainSubstring("spec.adoption to Adopt"))
			g.Expect(rs.Desired).To(BeEmpty(), "a conflict is not in the inventory")
		}
		g.Expect(resourceNamed(css.Status.Resources, "ConfigMap", "new").State).To(Equal(holdfastv1.ResourceInSync))
		applied := condition(css.Status.Conditions, holdfastv1.AppliedCondition)
		g.Expect(applied.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(applied.Reason).To(Equal(holdfastv1.ConflictReason))
		g.Expect(applied.Message).To(ContainSubstring("v1 ConfigMap " + ns + "/existing (service \"web\") exists on the cluster and Holdfast did not create it"))
		g.Expect(applied.Message).To(ContainSubstring("v1 Namespace " + ns + " (service \"web\")"))
		g.Expect(css.Status.ConflictCount).To(BeEquivalentTo(2))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionFalse))
	})
	consistently(t, 2*time.Second, func(g Gomega) {
		expectLeftAlone(g, ns, "existing")
		g.Expect(expectNamespace(g, ns).Labels).NotTo(HaveKey(holdfastv1.ManagedByLabel))
	})

	t.Log("Deleted on the cluster, the existing ConfigMap is replaced by Holdfast's own at the next look")
	NewWithT(t).Expect(targets["cluster-1"].Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "existing"}})).To(Succeed())
	requestCorrection(t, name, "after-delete")
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "existing")
		g.Expect(cm.Data).To(Equal(map[string]string{"k": "ours"}))
		g.Expect(cm.Labels).To(HaveKeyWithValue(holdfastv1.ManagedByLabel, holdfastv1.ManagedByValue))
		rs := resourceNamed(statusOf(g, name, "cluster-1").Status.Resources, "ConfigMap", "existing")
		g.Expect(rs.State).To(Equal(holdfastv1.ResourceInSync))
		g.Expect(rs.Adopted).To(BeFalse())
	})

	t.Log("Withdrawal deletes what Holdfast created and nothing else")
	deleteServiceSet(t, name)
	eventually(t, func(g Gomega) {
		expectNoConfigMap(g, "cluster-1", ns, "new")
		expectNoConfigMap(g, "cluster-1", ns, "existing")
	})
	consistently(t, 2*time.Second, func(g Gomega) {
		expectNamespace(g, ns)
		expectLeftAlone(g, ns, "theirs")
	})
}

// TestAdoptionAdoptTakesOverButNeverDeletes: with adoption Adopt, a declared Namespace and
// ConfigMap that already exist are taken over (the ConfigMap gets the declared data and
// Holdfast's labels) and recorded as adopted, in status and on the objects; another service set
// of a higher priority cannot take them for Holdfast's own; deleting the service set leaves both
// in place, without Holdfast's labels and annotations, and deletes only what Holdfast created.
func TestAdoptionAdoptTakesOverButNeverDeletes(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createOnTarget(t, ns)
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: existingYAML(ns)})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), Adoption: holdfastv1.AdoptionAdopt,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})

	css := expectReady(t, name, "cluster-1")
	NewWithT(t).Expect(resourceNamed(css.Status.Resources, "Namespace", ns)).To(And(
		HaveField("State", holdfastv1.ResourceInSync), HaveField("Adopted", true)))
	NewWithT(t).Expect(resourceNamed(css.Status.Resources, "ConfigMap", "existing")).To(And(
		HaveField("State", holdfastv1.ResourceInSync), HaveField("Adopted", true)))
	NewWithT(t).Expect(resourceNamed(css.Status.Resources, "ConfigMap", "new")).To(And(
		HaveField("State", holdfastv1.ResourceInSync), HaveField("Adopted", false)))
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "existing")
		g.Expect(cm.Data).To(Equal(map[string]string{"k": "ours"}))
		g.Expect(cm.Labels).To(HaveKeyWithValue(holdfastv1.ManagedByLabel, holdfastv1.ManagedByValue))
		g.Expect(cm.Labels).To(HaveKeyWithValue("team", "payments"), "labels of other managers stay")
		g.Expect(cm.Annotations).To(HaveKeyWithValue(holdfastv1.OwnerAnnotation, name))
		g.Expect(cm.Annotations).To(HaveKeyWithValue(holdfastv1.AdoptedAnnotation, "true"))
		g.Expect(expectNamespace(g, ns).Annotations).To(HaveKeyWithValue(holdfastv1.AdoptedAnnotation, "true"))
		g.Expect(getConfigMap(g, "cluster-1", ns, "new").Annotations).NotTo(HaveKey(holdfastv1.AdoptedAnnotation))
	})

	t.Log("Another service set, of a higher priority, does not take an adopted object for Holdfast's own")
	other := name + "-other"
	createTemplate(t, other, holdfastv1.ServiceTemplateSpec{Inline: fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: existing, namespace: %s}\ndata: {k: other}\n", ns)})
	createServiceSet(t, other, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), Priority: 500, Services: []holdfastv1.Service{service("web", other, ns)},
	})
	eventually(t, func(g Gomega) {
		rs := resourceNamed(statusOf(g, other, "cluster-1").Status.Resources, "ConfigMap", "existing")
		g.Expect(rs.State).To(Equal(holdfastv1.ResourceConflict))
		g.Expect(rs.Message).To(ContainSubstring("Holdfast did not create it"))
	})
	consistently(t, time.Second, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "existing").Data).To(Equal(map[string]string{"k": "ours"}))
	})
	deleteServiceSet(t, other)

	t.Log("Deleting the service set leaves the adopted objects in place, released")
	deleteServiceSet(t, name)
	eventually(t, func(g Gomega) { expectNoConfigMap(g, "cluster-1", ns, "new") })
	consistently(t, 2*time.Second, func(g Gomega) {
		n := expectNamespace(g, ns)
		g.Expect(n.Labels).NotTo(HaveKey(holdfastv1.ManagedByLabel))
		cm := getConfigMap(g, "cluster-1", ns, "existing")
		g.Expect(cm.Data).To(Equal(map[string]string{"k": "ours"}), "the values Holdfast applied stay")
		g.Expect(cm.Labels).To(Equal(map[string]string{"team": "payments"}))
		g.Expect(cm.Annotations).NotTo(HaveKey(holdfastv1.OwnerAnnotation))
		g.Expect(cm.Annotations).NotTo(HaveKey(holdfastv1.AdoptedAnnotation))
		g.Expect(n.Annotations).NotTo(HaveKey(holdfastv1.AdoptedAnnotation))
		expectLeftAlone(g, ns, "theirs")
	})
}

package clusterservicestatus_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestServiceAccountLimitsWhatASetMayDo: a service set with spec.serviceAccount gets on the
// target only what that ServiceAccount's RBAC allows. Its ServiceAccount may write ConfigMaps in
// namespace A only: the ConfigMap declared into A is deployed; the one declared into B is
// refused, that object alone, with a message naming the ServiceAccount and what to grant, while
// another service set deploys into B as Holdfast's own identity; withdrawal goes as the
// ServiceAccount too (it fails while its Role lacks delete, and succeeds once it has it); and
// the same set without spec.serviceAccount deploys into B.
func TestServiceAccountLimitsWhatASetMayDo(t *testing.T) {
	name, other := objName(t, ""), objName(t, "other")
	nsA, nsB, nsSA := objName(t, "a"), objName(t, "b"), objName(t, "sa")
	ctx := context.Background()
	c1 := targets["cluster-1"]
	g := NewWithT(t)

	// On the target, as its admin: the namespaces, and a ServiceAccount allowed ConfigMaps in A.
	for _, ns := range []string{nsA, nsB, nsSA} {
		g.Expect(c1.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		t.Cleanup(func() { _ = c1.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	}
	g.Expect(c1.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: nsSA, Name: "deployer"}})).To(Succeed())
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "deployer"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "create", "patch"}}}}
	g.Expect(c1.Create(ctx, role)).To(Succeed())
	g.Expect(c1.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "deployer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: nsSA, Name: "deployer"}}})).To(Succeed())
	setVerbs := func(verbs ...string) {
		t.Helper()
		r := &rbacv1.Role{}
		g.Expect(c1.Get(ctx, client.ObjectKeyFromObject(role), r)).To(Succeed())
		r.Rules[0].Verbs = verbs
		g.Expect(c1.Update(ctx, r)).To(Succeed())
	}

	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{
		Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {k: v}\n"})
	createTemplate(t, other, holdfastv1.ServiceTemplateSpec{
		Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {k: v}\n"})
	createServiceSet(t, other, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), Services: []holdfastv1.Service{service("b", other, nsB)}})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"),
		ServiceAccount:  &holdfastv1.ServiceAccountReference{Namespace: nsSA, Name: "deployer"},
		Services:        []holdfastv1.Service{service("a", name, nsA), service("b", name, nsB)},
	})
	// Runs before the set's deletion: its withdrawal, as the ServiceAccount, needs delete.
	t.Cleanup(func() { setVerbs("get", "list", "create", "patch", "delete") })

	user := "system:serviceaccount:" + nsSA + ":deployer"
	refused := fmt.Sprintf("forbidden as %s (", user)
	grant := fmt.Sprintf("): grant it get, list, create, patch and delete on configmaps in namespace %s (a Role and RoleBinding), or change spec.serviceAccount", nsB)
	eventually(t, func(g Gomega) {
		getConfigMap(g, "cluster-1", nsA, "settings")
		css := statusOf(g, name, "cluster-1")
		var inB holdfastv1.ResourceStatus
		for _, rs := range css.Status.Resources {
			switch rs.Namespace {
			case nsA:
				g.Expect(rs.State).To(Equal(holdfastv1.ResourceInSync), "the ConfigMap in A: %+v", rs)
			case nsB:
				inB = rs
			}
		}
		g.Expect(inB.State).To(Equal(holdfastv1.ResourceFailed), "the ConfigMap in B: %+v", inB)
		g.Expect(inB.Message).To(And(HavePrefix(refused), HaveSuffix(grant)))
		applied := condition(css.Status.Conditions, holdfastv1.AppliedCondition)
		g.Expect(applied.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(applied.Message).To(ContainSubstring(refused))
	})
	expectNoConfigMap(NewWithT(t), "cluster-1", nsB, "settings")
	expectReady(t, other, "cluster-1") // another service set deploys into B meanwhile
	getConfigMap(NewWithT(t), "cluster-1", nsB, "other")

	// Withdrawal goes as the ServiceAccount: without delete in A, the ConfigMap stays.
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		m.Spec.Services = []holdfastv1.Service{service("b", name, nsB)}
	})
	eventually(t, func(g Gomega) {
		applied := condition(statusOf(g, name, "cluster-1").Status.Conditions, holdfastv1.AppliedCondition)
		g.Expect(applied.Message).To(And(ContainSubstring(`withdrawing service "a"`), ContainSubstring(refused+"delete configmaps in namespace "+nsA+")")))
	})
	getConfigMap(NewWithT(t), "cluster-1", nsA, "settings")
	setVerbs("get", "list", "create", "patch", "delete")
	requestCorrection(t, name, "granted delete")
	eventually(t, func(g Gomega) {
		expectNoConfigMap(g, "cluster-1", nsA, "settings")
	})

	// The same set as Holdfast's own identity deploys into B.
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) { m.Spec.ServiceAccount = nil })
	expectReady(t, name, "cluster-1")
	getConfigMap(NewWithT(t), "cluster-1", nsB, "settings")
}

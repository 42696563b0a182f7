package main

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/naming"
)

// TestPullDependsOnAcrossSets: on a Pull cluster, a service naming another service set's service
// ("storage/db") waits, applying nothing, while db is not healthy there, and is applied promptly
// once it is — brought back by the agent when db's status object says so, not by its own next
// full reconcile, hours away.
func TestPullDependsOnAcrossSets(t *testing.T) {
	f := startPullFleet(t)
	ctx, g, hub, edgeClient := t.Context(), NewWithT(t), f.hub, f.edgeClient
	configMap := func(name, ready string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: apps}\ndata: {ready: %q}\n", name, ready)
	}
	for name, inline := range map[string]string{"storage": configMap("db", "false"), "web": configMap("app", "true")} {
		g.Expect(hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "holdfast-system", Name: name},
			Spec: holdfastv1.ServiceTemplateSpec{Inline: inline}})).To(Succeed())
	}
	selector := holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"mode": "pull"}}}
	service := func(name, template string, dependsOn ...string) holdfastv1.Service {
		return holdfastv1.Service{Name: name, Namespace: "apps", DependsOn: dependsOn,
			Template: holdfastv1.TemplateReference{Namespace: "holdfast-system", Name: template}}
	}
	g.Expect(hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: holdfastv1.MultiClusterServiceSpec{ClusterSelector: selector, Services: []holdfastv1.Service{service("app", "web", "storage/db")}}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "storage"},
		Spec: holdfastv1.MultiClusterServiceSpec{ClusterSelector: selector, Services: []holdfastv1.Service{service("db", "storage")},
			HealthChecks: []holdfastv1.HealthCheck{{Kind: "ConfigMap", Expr: `self.data.ready == "true"`}}}})).To(Succeed())
	present := func(g Gomega, name string) bool {
		err := edgeClient.Get(ctx, client.ObjectKey{Namespace: "apps", Name: name}, &corev1.ConfigMap{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		return !apierrors.IsNotFound(err)
	}
	webStatus := func(g Gomega) *holdfastv1.ClusterServiceStatus {
		css := &holdfastv1.ClusterServiceStatus{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: naming.StatusName("web", "edge")}, css)).To(Succeed())
		return css
	}

	t.Log("db is applied but not healthy: app waits on the Pull cluster")
	g.Eventually(func(g Gomega) {
		g.Expect(present(g, "db")).To(BeTrue())
		applied := conditions.Get(webStatus(g), holdfastv1.AppliedCondition)
		g.Expect(applied).NotTo(BeNil())
		g.Expect(applied.Reason).To(Equal(holdfastv1.WaitingForDependenciesReason), "%+v", applied)
		g.Expect(applied.Message).To(ContainSubstring("storage/db"))
	}).WithTimeout(60 * time.Second).Should(Succeed())
	g.Consistently(func(g Gomega) { g.Expect(present(g, "app")).To(BeFalse(), "app applied before db is healthy") }).
		WithTimeout(2 * time.Second).Should(Succeed())

	t.Log("db becomes healthy: the agent applies app at once")
	g.Eventually(func(g Gomega) {
		tpl := &holdfastv1.ServiceTemplate{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: "holdfast-system", Name: "storage"}, tpl)).To(Succeed())
		tpl.Spec.Inline = configMap("db", "true")
		g.Expect(hub.Update(ctx, tpl)).To(Succeed())
	}).WithTimeout(30 * time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(present(g, "app")).To(BeTrue())
		g.Expect(conditions.IsTrue(webStatus(g), holdfastv1.AppliedCondition)).To(BeTrue())
	}).WithTimeout(30*time.Second).Should(Succeed(), "app applied once db is healthy, without waiting for web's next full reconcile")
}

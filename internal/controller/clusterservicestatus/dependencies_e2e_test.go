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

// TestDependsOn: a service is applied on a cluster only once the services it depends on are
// healthy there; services in a dependency cycle, or naming a service the set does not have, are
// never applied and the status object names why, while the others of the set deploy.
func TestDependsOn(t *testing.T) {
	const cluster = "cluster-1"
	ctx := context.Background()
	ns := objName(t, "ns")
	target := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	NewWithT(t).Expect(targets[cluster].Create(ctx, target)).To(Succeed())
	t.Cleanup(func() { _ = targets[cluster].Delete(context.Background(), target) })
	configMap := func(name, ready string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata: {ready: %q}\n", name, ready)
	}
	present := func(g Gomega, name string) bool {
		err := targets[cluster].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		return err == nil
	}

	set, db, app := objName(t, ""), objName(t, "db"), objName(t, "app")
	createTemplate(t, db, holdfastv1.ServiceTemplateSpec{Inline: configMap("db", "false")})
	createTemplate(t, app, holdfastv1.ServiceTemplateSpec{Inline: configMap("app", "true")})
	appSvc := service("app", app, ns)
	appSvc.DependsOn = []string{"db"}
	// Declared before what it depends on: the order comes from dependsOn.
	createServiceSet(t, set, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
		Services:     []holdfastv1.Service{appSvc, service("db", db, ns)},
		HealthChecks: []holdfastv1.HealthCheck{{Kind: "ConfigMap", Expr: `self.data.ready == "true"`}}})

	t.Log("db is applied but not healthy: app waits, and is not on the cluster")
	eventually(t, func(g Gomega) {
		g.Expect(present(g, "db")).To(BeTrue())
		css := statusOf(g, set, cluster)
		st := serviceOf(css, "app")
		g.Expect(st.Reason).To(Equal(holdfastv1.WaitingForDependenciesReason), "app: %+v", st)
		g.Expect(st.Message).To(ContainSubstring("waits for db"))
		applied := condition(css.Status.Conditions, holdfastv1.AppliedCondition)
		g.Expect(applied.Status).To(Equal(metav1.ConditionUnknown), "Applied: %+v", applied)
		g.Expect(applied.Reason).To(Equal(holdfastv1.WaitingForDependenciesReason))
	})
	consistently(t, 2*time.Second, func(g Gomega) { g.Expect(present(g, "app")).To(BeFalse(), "app applied before db is healthy") })

	t.Log("db becomes healthy: app is applied")
	updateTemplate(t, db, func(tpl *holdfastv1.ServiceTemplate) { tpl.Spec.Inline = configMap("db", "true") })
	eventually(t, func(g Gomega) {
		g.Expect(present(g, "app")).To(BeTrue())
		css := statusOf(g, set, cluster)
		g.Expect(serviceOf(css, "app").Ready).To(Equal(metav1.ConditionTrue))
		g.Expect(condition(css.Status.Conditions, holdfastv1.AppliedCondition).Status).To(Equal(metav1.ConditionTrue))
	})

	t.Log("A cycle and an unknown name: those services are refused, the rest deploys")
	bad := objName(t, "bad")
	createTemplate(t, bad+"-x", holdfastv1.ServiceTemplateSpec{Inline: configMap("x", "true")})
	createTemplate(t, bad+"-y", holdfastv1.ServiceTemplateSpec{Inline: configMap("y", "true")})
	createTemplate(t, bad+"-w", holdfastv1.ServiceTemplateSpec{Inline: configMap("w", "true")})
	createTemplate(t, bad+"-v", holdfastv1.ServiceTemplateSpec{Inline: configMap("v", "true")})
	x, y, v := service("x", bad+"-x", ns), service("y", bad+"-y", ns), service("v", bad+"-v", ns)
	x.DependsOn, y.DependsOn, v.DependsOn = []string{"y"}, []string{"x"}, []string{"nope"}
	createServiceSet(t, bad, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
		Services: []holdfastv1.Service{x, y, service("w", bad+"-w", ns), v}})
	eventually(t, func(g Gomega) {
		g.Expect(present(g, "w")).To(BeTrue())
		css := statusOf(g, bad, cluster)
		applied := condition(css.Status.Conditions, holdfastv1.AppliedCondition)
		g.Expect(applied.Status).To(Equal(metav1.ConditionFalse), "Applied: %+v", applied)
		g.Expect(applied.Reason).To(Equal(holdfastv1.InvalidDependencyReason))
		g.Expect(applied.Message).To(And(ContainSubstring("cycle among services x, y"), ContainSubstring(`"nope"`)))
		g.Expect(serviceOf(css, "x").Reason).To(Equal(holdfastv1.InvalidDependencyReason))
		g.Expect(serviceOf(css, "w").Ready).To(Equal(metav1.ConditionTrue))
	})
	for _, name := range []string{"x", "y", "v"} {
		g := NewWithT(t)
		g.Expect(present(g, name)).To(BeFalse(), "%s applied despite its dependencies", name)
	}
}

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

// TestDependsOnAcrossSets: a service naming another service set's service
// ("<multiclusterservice>/<service>") waits on a cluster, applying nothing, while that set does
// not exist and then while its service is not healthy there, and is applied once it is: promptly,
// brought back by the other set's status object (its own next full reconcile is hours away). A
// cycle across service sets is refused on both sides, naming it, while the rest of each set
// deploys.
func TestDependsOnAcrossSets(t *testing.T) {
	const cluster = "cluster-1"
	ctx := context.Background()
	ns := objName(t, "ns")
	target := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	NewWithT(t).Expect(targets[cluster].Create(ctx, target)).To(Succeed())
	t.Cleanup(func() { _ = targets[cluster].Delete(context.Background(), target) })
	configMap := func(name, ready string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata: {ready: %q}\n", name, ready)
	}
	get := func(g Gomega, name string) (*corev1.ConfigMap, bool) {
		cm := &corev1.ConfigMap{}
		err := targets[cluster].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		return cm, err == nil
	}
	present := func(g Gomega, name string) bool {
		_, ok := get(g, name)
		return ok
	}
	waiting := func(g Gomega, set, service string, why ...string) {
		css := statusOf(g, set, cluster)
		st := serviceOf(css, service)
		g.Expect(st.Reason).To(Equal(holdfastv1.WaitingForDependenciesReason), "%s: %+v", service, st)
		for _, w := range why {
			g.Expect(st.Message).To(ContainSubstring(w))
		}
		applied := condition(css.Status.Conditions, holdfastv1.AppliedCondition)
		g.Expect(applied.Status).To(Equal(metav1.ConditionUnknown), "Applied: %+v", applied)
		g.Expect(applied.Reason).To(Equal(holdfastv1.WaitingForDependenciesReason))
	}

	storage, web := objName(t, "storage"), objName(t, "web")
	createTemplate(t, storage, holdfastv1.ServiceTemplateSpec{Inline: configMap("db", "false")})
	createTemplate(t, web, holdfastv1.ServiceTemplateSpec{Inline: configMap("app", "true")})
	app := service("app", web, ns)
	app.DependsOn = []string{storage + "/db"}
	createServiceSet(t, web, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
		Services: []holdfastv1.Service{app, service("cache", web, ns+"-cache")}})

	t.Log("The service set depended on does not exist: app waits, naming it; the rest of its set deploys")
	eventually(t, func(g Gomega) {
		waiting(g, web, "app", "waits for "+storage+"/db", "MultiClusterService "+storage+" does not exist")
		g.Expect(serviceOf(statusOf(g, web, cluster), "cache").Ready).To(Equal(metav1.ConditionTrue))
	})
	g := NewWithT(t)
	g.Expect(present(g, "app")).To(BeFalse(), "app applied before its dependency exists")

	t.Log("It exists, and its db is applied but not healthy (a CEL check): app still waits")
	createServiceSet(t, storage, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
		Services:     []holdfastv1.Service{service("db", storage, ns)},
		HealthChecks: []holdfastv1.HealthCheck{{Kind: "ConfigMap", Expr: `self.data.ready == "true"`}}})
	eventually(t, func(g Gomega) {
		g.Expect(present(g, "db")).To(BeTrue())
		g.Expect(serviceOf(statusOf(g, storage, cluster), "db").Health).To(Equal(holdfastv1.HealthInProgress))
		waiting(g, web, "app", storage+"/db: not healthy there (InProgress")
	})
	consistently(t, 2*time.Second, func(g Gomega) { g.Expect(present(g, "app")).To(BeFalse(), "app applied before db is healthy") })

	t.Log("db becomes healthy: app is applied after it")
	updateTemplate(t, storage, func(tpl *holdfastv1.ServiceTemplate) { tpl.Spec.Inline = configMap("db", "true") })
	eventually(t, func(g Gomega) {
		g.Expect(present(g, "app")).To(BeTrue())
		css := statusOf(g, web, cluster)
		g.Expect(serviceOf(css, "app").Ready).To(Equal(metav1.ConditionTrue), "app: %+v", serviceOf(css, "app"))
		g.Expect(condition(css.Status.Conditions, holdfastv1.AppliedCondition).Status).To(Equal(metav1.ConditionTrue))
	})
	g = NewWithT(t)
	db, _ := get(g, "db")
	appCM, _ := get(g, "app")
	g.Expect(appCM.CreationTimestamp.Before(&db.CreationTimestamp)).To(BeFalse(), "app created %s, before db %s", appCM.CreationTimestamp, db.CreationTimestamp)
	stored := serviceOf(statusOf(g, storage, cluster), "db")
	g.Expect(stored.RevisionTime).NotTo(BeNil())
	g.Expect(appCM.CreationTimestamp.Time).To(BeTemporally(">=", stored.RevisionTime.Truncate(time.Second)),
		"app created before db's healthy revision was applied")

	t.Log("A cycle across two service sets: both services are refused, naming it; the rest deploys")
	left, right := objName(t, "left"), objName(t, "right")
	createTemplate(t, left, holdfastv1.ServiceTemplateSpec{Inline: configMap("x", "true")})
	createTemplate(t, right, holdfastv1.ServiceTemplateSpec{Inline: configMap("y", "true")})
	createTemplate(t, left+"-w", holdfastv1.ServiceTemplateSpec{Inline: configMap("w", "true")})
	x, y := service("x", left, ns), service("y", right, ns)
	x.DependsOn, y.DependsOn = []string{right + "/y"}, []string{left + "/x"}
	createServiceSet(t, left, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
		Services: []holdfastv1.Service{x, service("w", left+"-w", ns)}})
	createServiceSet(t, right, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
		Services: []holdfastv1.Service{y}})
	for set, cycle := range map[string]string{
		left:  fmt.Sprintf("%s/x -> %s/y -> %s/x", left, right, left),
		right: fmt.Sprintf("%s/y -> %s/x -> %s/y", right, left, right),
	} {
		eventually(t, func(g Gomega) {
			css := statusOf(g, set, cluster)
			applied := condition(css.Status.Conditions, holdfastv1.AppliedCondition)
			g.Expect(applied.Status).To(Equal(metav1.ConditionFalse), "Applied of %s: %+v", set, applied)
			g.Expect(applied.Reason).To(Equal(holdfastv1.InvalidDependencyReason))
			g.Expect(applied.Message).To(ContainSubstring("cycle across service sets: " + cycle))
		})
	}
	eventually(t, func(g Gomega) {
		g.Expect(present(g, "w")).To(BeTrue())
		g.Expect(serviceOf(statusOf(g, left, cluster), "x").Reason).To(Equal(holdfastv1.InvalidDependencyReason))
		g.Expect(serviceOf(statusOf(g, right, cluster), "y").Reason).To(Equal(holdfastv1.InvalidDependencyReason))
	})
	for _, name := range []string{"x", "y"} {
		g := NewWithT(t)
		g.Expect(present(g, name)).To(BeFalse(), "%s applied despite the cycle", name)
	}
}

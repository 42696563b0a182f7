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
	"holdfast.dev/holdfast/internal/sandbox"
)

// deployment is a Deployment's manifest; extraSpec is added to its spec, podMeta to its pod
// template's metadata and podSpec to the pod's spec. The targets run kube-controller-manager,
// kube-scheduler and a simulated node (KWOK): pods run, unless annotated to fail
// (sandbox.SimulateFailureAnnotation) or selecting no node.
func deployment(name string, replicas int, extraSpec, podMeta, podSpec string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: %[2]d
%[3]s  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
%[4]s    spec:
%[5]s      containers:
      - name: app
        image: registry.example/app:1
`, name, replicas, extraSpec, podMeta, podSpec)
}

// TestHealthOfDeployedObjects: every applied object's health is computed with kstatus and
// rolled up per service and per cluster, and Ready means applied and healthy. A ConfigMap and a
// Deployment whose pod runs are healthy, and the status object Ready; a Deployment whose pods
// fail goes past its progress deadline and makes its service and the status object Healthy
// False (Unhealthy) naming it and kstatus's reason, and Ready False with that reason; one whose
// pods cannot be scheduled, still progressing when its service's healthTimeout runs out, makes
// it Healthy False (HealthTimeout).
func TestHealthOfDeployedObjects(t *testing.T) {
	const cluster = "cluster-1"
	ctx := context.Background()
	ns := objName(t, "ns")
	target := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	NewWithT(t).Expect(targets[cluster].Create(ctx, target)).To(Succeed())
	t.Cleanup(func() {
		_ = targets[cluster].Delete(context.Background(), target)
		// Created by the "config" service (createNamespace), not managed.
		_ = targets[cluster].Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-b"}})
	})

	healthy, failing, slow := objName(t, "ok"), objName(t, "failing"), objName(t, "slow")
	createTemplate(t, healthy, holdfastv1.ServiceTemplateSpec{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata: {a: b}\n---\n" +
		deployment("web", 1, "", "", "")})
	createTemplate(t, failing, holdfastv1.ServiceTemplateSpec{Inline: deployment("stuck", 1, "  progressDeadlineSeconds: 2\n",
		"      annotations: {"+sandbox.SimulateFailureAnnotation+": \"true\"}\n", "")})
	createTemplate(t, slow, holdfastv1.ServiceTemplateSpec{Inline: deployment("waiting", 1, "", "", "      nodeSelector: {example.com/no-such-node: \"true\"}\n")})
	createServiceSet(t, healthy, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
		Services: []holdfastv1.Service{service("app", healthy, ns)}})
	createServiceSet(t, failing, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
		Services: []holdfastv1.Service{service("config", healthy, ns+"-b"), service("stuck", failing, ns)}})
	waitingSvc := service("waiting", slow, ns)
	waitingSvc.HealthTimeout = &metav1.Duration{Duration: 3 * time.Second}
	createServiceSet(t, slow, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
		Services: []holdfastv1.Service{waitingSvc}})

	t.Log("A ConfigMap and a Deployment whose pod runs: healthy, and Ready")
	eventually(t, func(g Gomega) {
		css := statusOf(g, healthy, cluster)
		c := condition(css.Status.Conditions, holdfastv1.HealthyCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "Healthy: %+v", c)
		g.Expect(c.Reason).To(Equal(holdfastv1.HealthyReason))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(entryOf(css, "ConfigMap", "settings").Health).To(Equal(holdfastv1.HealthCurrent))
		g.Expect(entryOf(css, "Deployment", "web").Health).To(Equal(holdfastv1.HealthCurrent))
		g.Expect(serviceOf(css, "app").Health).To(Equal(holdfastv1.HealthCurrent))
	})

	t.Log("A Deployment whose pods fail, past its progress deadline: Unhealthy, named with kstatus's reason; not Ready")
	eventually(t, func(g Gomega) {
		css := statusOf(g, failing, cluster)
		c := condition(css.Status.Conditions, holdfastv1.HealthyCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "Healthy: %+v", c)
		g.Expect(c.Reason).To(Equal(holdfastv1.UnhealthyReason))
		g.Expect(c.Message).To(And(ContainSubstring("Deployment "+ns+"/stuck"), ContainSubstring("Progress deadline exceeded")))
		stuck := entryOf(css, "Deployment", "stuck")
		g.Expect(stuck.Health).To(Equal(holdfastv1.HealthFailed))
		g.Expect(stuck.HealthMessage).To(ContainSubstring("Progress deadline exceeded"))
		g.Expect(serviceOf(css, "stuck").Health).To(Equal(holdfastv1.HealthFailed))
		g.Expect(serviceOf(css, "config").Health).To(Equal(holdfastv1.HealthCurrent), "the other service of the set stays healthy")
		ready := condition(css.Status.Conditions, holdfastv1.ReadyCondition)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(holdfastv1.UnhealthyReason))
	}, "waiting for the progress deadline")
	t.Log("... and the service set says so, naming the cluster")
	eventually(t, func(g Gomega) {
		mcs := &holdfastv1.MultiClusterService{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Name: failing}, mcs)).To(Succeed())
		c := condition(mcs.Status.Conditions, holdfastv1.HealthyCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "Healthy: %+v", c)
		g.Expect(c.Message).To(And(ContainSubstring(cluster+" (Unhealthy)"), ContainSubstring("Progress deadline exceeded")))
		g.Expect(mcs.Status.HealthyClusters).To(BeZero())
	})

	t.Log("A Deployment still progressing when its service's healthTimeout runs out: HealthTimeout")
	eventually(t, func(g Gomega) {
		css := statusOf(g, slow, cluster)
		c := condition(css.Status.Conditions, holdfastv1.HealthyCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "Healthy: %+v", c)
		g.Expect(c.Reason).To(Equal(holdfastv1.HealthTimeoutReason))
		g.Expect(c.Message).To(And(ContainSubstring("Deployment "+ns+"/waiting"), ContainSubstring("healthTimeout 3s")))
		g.Expect(entryOf(css, "Deployment", "waiting").Health).To(Equal(holdfastv1.HealthInProgress), "the object's own health stays kstatus's")
		g.Expect(serviceOf(css, "waiting").Health).To(Equal(holdfastv1.HealthFailed))
	}, "waiting for the health timeout")
}

// TestCustomHealthChecks: a service set's CEL health checks judge the kinds they name instead of
// kstatus — healthy, still progressing, failed — and a check that does not compile makes the
// status object Healthy False naming it, without stopping the deployment.
func TestCustomHealthChecks(t *testing.T) {
	const cluster = "cluster-1"
	ctx := context.Background()
	ns := objName(t, "ns")
	target := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	NewWithT(t).Expect(targets[cluster].Create(ctx, target)).To(Succeed())
	t.Cleanup(func() { _ = targets[cluster].Delete(context.Background(), target) })
	configMap := func(name, ready string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata: {ready: %q}\n---\n", name, ready)
	}
	checks := []holdfastv1.HealthCheck{{Kind: "ConfigMap", Expr: `self.data.ready == "true"`, Failed: `self.data.ready == "broken"`}}
	sets := map[string]struct {
		manifests string
		checks    []holdfastv1.HealthCheck
	}{
		objName(t, "ok"):      {configMap("ok-a", "true"), checks},
		objName(t, "waiting"): {configMap("waiting-a", "true") + configMap("waiting-b", "false"), checks},
		objName(t, "broken"):  {configMap("broken-a", "true") + configMap("broken-c", "broken"), checks},
		objName(t, "invalid"): {configMap("invalid-a", "false"), []holdfastv1.HealthCheck{{Kind: "ConfigMap", Expr: `self.data.(`}}},
	}
	for name, set := range sets {
		createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: set.manifests})
		createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
			Services: []holdfastv1.Service{service("app", name, ns)}, HealthChecks: set.checks})
	}
	expect := func(set string, status metav1.ConditionStatus, reason string, message ...string) {
		t.Helper()
		eventually(t, func(g Gomega) {
			css := statusOf(g, set, cluster)
			c := condition(css.Status.Conditions, holdfastv1.HealthyCondition)
			g.Expect(c.Status).To(Equal(status), "Healthy: %+v", c)
			g.Expect(c.Reason).To(Equal(reason))
			for _, m := range message {
				g.Expect(c.Message).To(ContainSubstring(m))
			}
			g.Expect(condition(css.Status.Conditions, holdfastv1.AppliedCondition).Status).To(Equal(metav1.ConditionTrue), "deployed whatever the health checks say")
		}, set)
	}
	expect(objName(t, "ok"), metav1.ConditionTrue, holdfastv1.HealthyReason)
	expect(objName(t, "waiting"), metav1.ConditionUnknown, holdfastv1.ProgressingReason, "ConfigMap "+ns+"/waiting-b", `health check "self.data.ready == \"true\"" is not true yet`)
	expect(objName(t, "broken"), metav1.ConditionFalse, holdfastv1.UnhealthyReason, "ConfigMap "+ns+"/broken-c", "failed expression is true")
	expect(objName(t, "invalid"), metav1.ConditionFalse, holdfastv1.InvalidHealthCheckReason, "spec.healthChecks[0] (ConfigMap) expr", "fix spec.healthChecks")
}

package clusterservicestatus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// configMaps returns inline manifests: a Namespace and one ConfigMap per name in it, whose data
// names the cluster (GoTemplate).
func configMaps(namespace string, names ...string) string {
	out := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", namespace)
	for _, n := range names {
		out += fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  cluster: '{{ .Cluster.Name }}'\n  env: '{{ index .Cluster.Labels \"env\" }}'\n", n, namespace)
	}
	return out
}

func getConfigMap(g Gomega, cluster, namespace, name string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{}
	g.Expect(targets[cluster].Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, cm)).To(Succeed(),
		"ConfigMap %s/%s on %s", namespace, name, cluster)
	return cm
}

func expectNoConfigMap(g Gomega, cluster, namespace, name string) {
	err := targets[cluster].Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, &corev1.ConfigMap{})
	g.Expect(apiNotFound(err)).To(BeTrue(), "ConfigMap %s/%s on %s: %v", namespace, name, cluster, err)
}

func TestInlineFollowsTheSelector(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "a", "b"), Templating: holdfastv1.TemplatingGoTemplate})
	mcs := createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"),
		Services:        []holdfastv1.Service{service("web", name, ns)},
	})

	t.Log("Only the dev cluster gets the service, templated with its name and labels")
	expectReady(t, name, "cluster-1")
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "a")
		g.Expect(cm.Data).To(Equal(map[string]string{"cluster": "cluster-1", "env": "dev"}))
		g.Expect(cm.Labels).To(HaveKeyWithValue(holdfastv1.ManagedByLabel, holdfastv1.ManagedByValue))
		g.Expect(cm.Labels).To(HaveKeyWithValue(holdfastv1.OwnerLabel, name))
		g.Expect(cm.Labels).To(HaveKeyWithValue(holdfastv1.ServiceLabel, "web"))
		expectNoConfigMap(g, "cluster-2", ns, "a")
		m := &holdfastv1.MultiClusterService{}
		g.Expect(hub.Get(context.Background(), client.ObjectKey{Name: name}, m)).To(Succeed())
		g.Expect(m.Status.MatchingClusters).To(BeEquivalentTo(1))
		g.Expect(m.Status.ReadyClusters).To(BeEquivalentTo(1))
		g.Expect(condition(m.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Resources).To(HaveLen(3))
		g.Expect(css.Status.Resources).To(HaveEach(HaveField("State", holdfastv1.ResourceInSync)))
	})

	t.Log("Widening the selector adds the prod cluster")
	patchSelector(t, mcs, selectEnv(""))
	expectReady(t, name, "cluster-2")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-2", ns, "b").Data).To(HaveKeyWithValue("cluster", "cluster-2"))
	})

	t.Log("Narrowing it to prod withdraws the service from the dev cluster")
	patchSelector(t, mcs, selectEnv("prod"))
	eventually(t, func(g Gomega) {
		expectNoConfigMap(g, "cluster-1", ns, "a")
		expectNoConfigMap(g, "cluster-1", ns, "b")
		err := hub.Get(context.Background(), client.ObjectKey{Namespace: clusterNamespace, Name: name + ".cluster-1"}, &holdfastv1.ClusterServiceStatus{})
		g.Expect(apiNotFound(err)).To(BeTrue(), "status object of the withdrawn cluster: %v", err)
		getConfigMap(g, "cluster-2", ns, "a")
	})

	t.Log("Deleting the MultiClusterService removes what it deployed")
	deleteServiceSet(t, name)
	eventually(t, func(g Gomega) { expectNoConfigMap(g, "cluster-2", ns, "a") })
}

func patchSelector(t *testing.T, mcs *holdfastv1.MultiClusterService, sel holdfastv1.ClusterSelector) {
	t.Helper()
	eventually(t, func(g Gomega) {
		m := &holdfastv1.MultiClusterService{}
		g.Expect(hub.Get(context.Background(), client.ObjectKeyFromObject(mcs), m)).To(Succeed())
		m.Spec.ClusterSelector = sel
		g.Expect(hub.Update(context.Background(), m)).To(Succeed())
	})
}

func updateServiceSet(t *testing.T, name string, mutate func(*holdfastv1.MultiClusterService)) {
	t.Helper()
	eventually(t, func(g Gomega) {
		m := &holdfastv1.MultiClusterService{}
		g.Expect(hub.Get(context.Background(), client.ObjectKey{Name: name}, m)).To(Succeed())
		mutate(m)
		g.Expect(hub.Update(context.Background(), m)).To(Succeed())
	})
}

func updateTemplate(t *testing.T, name string, mutate func(*holdfastv1.ServiceTemplate)) {
	t.Helper()
	eventually(t, func(g Gomega) {
		tpl := &holdfastv1.ServiceTemplate{}
		g.Expect(hub.Get(context.Background(), client.ObjectKey{Namespace: templateNamespace, Name: name}, tpl)).To(Succeed())
		mutate(tpl)
		g.Expect(hub.Update(context.Background(), tpl)).To(Succeed())
	})
}

func TestPruneAndTemplateChange(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "keep", "drop")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	eventually(t, func(g Gomega) { getConfigMap(g, "cluster-1", ns, "drop") })

	updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) { tpl.Spec.Inline = configMaps(ns, "keep", "new") })
	eventually(t, func(g Gomega) {
		expectNoConfigMap(g, "cluster-1", ns, "drop")
		getConfigMap(g, "cluster-1", ns, "new")
		getConfigMap(g, "cluster-1", ns, "keep")
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Resources).To(HaveLen(3))
	})
}

// TestHubCacheKeepsNoInventory checks that the controller's cache holds status objects
// without their per-object lists, while the status objects themselves keep them.
func TestHubCacheKeepsNoInventory(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "a", "b")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), Services: []holdfastv1.Service{service("web", name, ns)},
		SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
	})
	expectReady(t, name, "cluster-1")
	cm := getConfigMap(NewWithT(t), "cluster-1", ns, "a")
	cm.Data = map[string]string{"changed": "by someone"}
	if err := targets["cluster-1"].Update(context.Background(), cm, client.FieldOwner("someone")); err != nil {
		t.Fatalf("changing ConfigMap a: %v", err)
	}
	eventually(t, func(g Gomega) {
		live := statusOf(g, name, "cluster-1")
		g.Expect(live.Status.Resources).To(HaveLen(3))
		g.Expect(live.Status.Drifts).NotTo(BeEmpty())
		cached := &holdfastv1.ClusterServiceStatus{}
		g.Expect(hubCache.Get(context.Background(), client.ObjectKeyFromObject(live), cached)).To(Succeed())
		g.Expect(cached.ResourceVersion).To(Equal(live.ResourceVersion))
		g.Expect(cached.Status.ResourceCount).To(BeEquivalentTo(3))
		g.Expect(cached.Status.DriftCount).To(Equal(live.Status.DriftCount))
		g.Expect(cached.Status.Resources).To(BeEmpty())
		g.Expect(cached.Status.Drifts).To(BeEmpty())
		g.Expect(cached.ManagedFields).To(BeEmpty())
	})
}

func TestConflictHigherPriorityWins(t *testing.T) {
	low, high, ns := objName(t, "low"), objName(t, "high"), objName(t, "ns")
	createTemplate(t, low, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "shared")})
	createTemplate(t, high, holdfastv1.ServiceTemplateSpec{Inline: fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: %s\ndata:\n  owner: high\n", ns)})
	createServiceSet(t, low, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), Priority: 100, Services: []holdfastv1.Service{service("web", low, ns)},
	})
	expectReady(t, low, "cluster-1")
	createServiceSet(t, high, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), Priority: 200, Services: []holdfastv1.Service{service("web", high, ns)},
	})

	t.Log("The higher priority takes the object; the lower reports a Conflict naming it")
	expectReady(t, high, "cluster-1")
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "shared")
		g.Expect(cm.Data).To(Equal(map[string]string{"owner": "high"}))
		g.Expect(cm.Annotations).To(HaveKeyWithValue(holdfastv1.OwnerAnnotation, high))
		css := statusOf(g, low, "cluster-1")
		ready := condition(css.Status.Conditions, holdfastv1.ReadyCondition)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(holdfastv1.ConflictReason))
		g.Expect(ready.Message).To(ContainSubstring(high))
		g.Expect(css.Status.Resources).To(ContainElement(And(
			HaveField("Name", "shared"), HaveField("State", holdfastv1.ResourceConflict), HaveField("ConflictWith", high))))
	})

	t.Log("No flapping: the object stays with the winner")
	cm := &corev1.ConfigMap{}
	NewWithT(t).Expect(targets["cluster-1"].Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "shared"}, cm)).To(Succeed())
	rv := cm.ResourceVersion
	updateServiceSet(t, low, func(m *holdfastv1.MultiClusterService) {
		m.Annotations = map[string]string{holdfastv1.ReconcileRequestedAtAnnotation: "conflict-check"}
	})
	consistently(t, 3*time.Second, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "shared").ResourceVersion).To(Equal(rv))
	})

	t.Log("When the winner goes, the other takes the object over")
	deleteServiceSet(t, high)
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "shared")
		g.Expect(cm.Annotations).To(HaveKeyWithValue(holdfastv1.OwnerAnnotation, low))
		g.Expect(cm.Data).To(HaveKeyWithValue("cluster", "{{ .Cluster.Name }}"), "template text untouched without GoTemplate")
	})
	expectReady(t, low, "cluster-1")
}

func TestDryRunChangesNothing(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	secretValue := "s3cr3t-dry-run-value"
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "a") + fmt.Sprintf(
		"---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: %s\nstringData:\n  password: %s\n", ns, secretValue)})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeDryRun,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Resources).To(HaveLen(3))
		g.Expect(css.Status.Resources).To(HaveEach(HaveField("State", holdfastv1.ResourceWouldCreate)))
		applied := condition(css.Status.Conditions, holdfastv1.AppliedCondition)
		g.Expect(applied.Reason).To(Equal(holdfastv1.DryRunReason))
		g.Expect(css.Status.Initialization).To(BeNil())
	})
	consistently(t, time.Second, func(g Gomega) {
		err := targets["cluster-1"].Get(context.Background(), client.ObjectKey{Name: ns}, &corev1.Namespace{})
		g.Expect(apiNotFound(err)).To(BeTrue(), "DryRun created the namespace: %v", err)
	})
	css := statusOf(NewWithT(t), name, "cluster-1")
	NewWithT(t).Expect(fmt.Sprintf("%+v", css.Status)).NotTo(ContainSubstring(secretValue))
	NewWithT(t).Expect(logs.String()).NotTo(ContainSubstring(secretValue))

	t.Log("Switching to Continuous applies; a later DryRun reports the update with a diff")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) { m.Spec.SyncMode = holdfastv1.SyncModeContinuous })
	expectReady(t, name, "cluster-1")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) { m.Spec.SyncMode = holdfastv1.SyncModeDryRun })
	updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) {
		tpl.Spec.Inline = configMaps(ns) + fmt.Sprintf(
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: %s\ndata:\n  cluster: changed\n", ns) + fmt.Sprintf(
			"---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: %s\nstringData:\n  password: %s-2\n", ns, secretValue)
	})
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Resources).To(ContainElement(And(HaveField("Name", "a"), HaveField("State", holdfastv1.ResourceWouldUpdate),
			HaveField("Diff", ContainSubstring("changed")))))
		g.Expect(fmt.Sprintf("%+v", css.Status)).NotTo(ContainSubstring(secretValue))
	})
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "{{ .Cluster.Name }}"))
	})
}

func TestOneTimeIsNotReapplied(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeOneTime,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) { tpl.Spec.Inline = configMaps(ns, "a", "b") })
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(condition(css.Status.Conditions, holdfastv1.AppliedCondition).Reason).To(Equal(holdfastv1.OneTimeDoneReason))
	})
	consistently(t, 2*time.Second, func(g Gomega) { expectNoConfigMap(g, "cluster-1", ns, "b") })
}

// deleteOutOfBand deletes a managed ConfigMap on a target, as someone on that cluster might.
func deleteOutOfBand(t *testing.T, cluster, ns, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = ns, name
	NewWithT(t).Expect(targets[cluster].Delete(context.Background(), cm)).To(Succeed())
}

func TestPeriodicReconcileSurvivesRestarts(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), ReconcileInterval: &metav1.Duration{Duration: 10 * time.Hour},
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	css := expectReady(t, name, "cluster-1")
	first := css.Status.LastFullReconcileTime
	NewWithT(t).Expect(first).NotTo(BeNil())

	t.Log("Drift nobody watches (Continuous mode): a restart 9h59m later does not run the full reconcile early")
	deleteOutOfBand(t, "cluster-1", ns, "a")
	clk.SetTime(first.Add(9*time.Hour + 59*time.Minute))
	restartManager(t)
	consistently(t, 3*time.Second, func(g Gomega) {
		expectNoConfigMap(g, "cluster-1", ns, "a")
		g.Expect(statusOf(g, name, "cluster-1").Status.LastFullReconcileTime.Equal(first)).To(BeTrue())
	})

	t.Log("A restart after the interval runs it at once, from the time persisted in status")
	clk.SetTime(first.Add(10*time.Hour + time.Minute))
	restartManager(t)
	eventually(t, func(g Gomega) {
		getConfigMap(g, "cluster-1", ns, "a")
		g.Expect(statusOf(g, name, "cluster-1").Status.LastFullReconcileTime.Time).To(BeTemporally("~", clk.Now(), 10*time.Second))
	})
}

func TestManualReconcileRequest(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv(""), Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	expectReady(t, name, "cluster-2")
	deleteOutOfBand(t, "cluster-1", ns, "a")
	consistently(t, time.Second, func(g Gomega) { expectNoConfigMap(g, "cluster-1", ns, "a") })

	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		m.Annotations = map[string]string{holdfastv1.ReconcileRequestedAtAnnotation: "2026-11-23T10:00:00Z"}
	})
	eventually(t, func(g Gomega) {
		getConfigMap(g, "cluster-1", ns, "a")
		for _, c := range []string{"cluster-1", "cluster-2"} {
			g.Expect(statusOf(g, name, c).Status.LastHandledReconcileAt).To(Equal("2026-11-23T10:00:00Z"))
		}
		m := &holdfastv1.MultiClusterService{}
		g.Expect(hub.Get(context.Background(), client.ObjectKey{Name: name}, m)).To(Succeed())
		g.Expect(m.Status.LastHandledReconcileAt).To(Equal("2026-11-23T10:00:00Z"))
	})
}

func TestDeletionPolicyOrphan(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), DeletionPolicy: holdfastv1.DeletionOrphan,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	deleteServiceSet(t, name)
	consistently(t, 2*time.Second, func(g Gomega) { getConfigMap(g, "cluster-1", ns, "a") })
}

func TestDeploymentGetsReplicaSet(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: %[1]s
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: registry.k8s.io/pause:3.10}]
`, ns)})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("prod"), Services: []holdfastv1.Service{service("web", name, "")},
	})
	expectReady(t, name, "cluster-2")
	eventually(t, func(g Gomega) {
		list := &appsv1.ReplicaSetList{}
		g.Expect(targets["cluster-2"].List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).NotTo(BeEmpty())
	})
	t.Log("kube-controller-manager's changes (status, revision annotation) cause no re-apply")
	d := &appsv1.Deployment{}
	NewWithT(t).Expect(targets["cluster-2"].Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, d)).To(Succeed())
	gen := d.Generation
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		m.Annotations = map[string]string{holdfastv1.ReconcileRequestedAtAnnotation: "again"}
	})
	eventually(t, func(g Gomega) {
		g.Expect(statusOf(g, name, "cluster-2").Status.LastHandledReconcileAt).To(Equal("again"))
	})
	NewWithT(t).Expect(targets["cluster-2"].Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, d)).To(Succeed())
	NewWithT(t).Expect(d.Generation).To(Equal(gen))
}

func TestUnmatchPolicyLeave(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "a")})
	mcs := createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), UnmatchPolicy: holdfastv1.UnmatchLeave,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	patchSelector(t, mcs, selectEnv("prod"))
	expectReady(t, name, "cluster-2")
	eventually(t, func(g Gomega) {
		err := hub.Get(context.Background(), client.ObjectKey{Namespace: clusterNamespace, Name: name + ".cluster-1"}, &holdfastv1.ClusterServiceStatus{})
		g.Expect(apiNotFound(err)).To(BeTrue(), "status object of the unselected cluster: %v", err)
	})
	consistently(t, 2*time.Second, func(g Gomega) { getConfigMap(g, "cluster-1", ns, "a") })
}

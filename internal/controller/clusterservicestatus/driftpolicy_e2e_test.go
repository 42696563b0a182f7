package clusterservicestatus_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/testsupport"
)

// editConfigMap sets key to value in a ConfigMap on a target as field manager manager.
func editConfigMap(t *testing.T, cluster, ns, name, manager, key, value string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, cluster, ns, name)
		cm.Data[key] = value
		g.Expect(targets[cluster].Update(context.Background(), cm, client.FieldOwner(manager))).To(Succeed())
	})
}

// deployWatched deploys ConfigMaps a and b in a namespace of their own, in drift-detection mode,
// to the clusters labelled env, and waits until cluster has them; it returns the service set's
// and the namespace's names.
func deployWatched(t *testing.T, env, cluster string) (name, ns string) {
	t.Helper()
	name, ns = objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a", "b")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv(env), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, cluster)
	statusSettled(t, name, cluster, time.Second)
	return name, ns
}

// statusSettled returns once the status object of name on cluster stayed the same for quiet:
// the reconciles a deploy (or a link's return) brought may still run, and an edit made during
// one is found by its comparison, not by the watch a test looks at.
func statusSettled(t *testing.T, name, cluster string, quiet time.Duration) {
	t.Helper()
	last := ""
	NewWithT(t).Eventually(func(g Gomega) {
		rv := statusOf(g, name, cluster).ResourceVersion
		same := rv == last
		last = rv
		g.Expect(same).To(BeTrue(), "the status object changed within the last %s", quiet)
	}).WithTimeout(time.Minute).WithPolling(quiet).Should(Succeed(), "the status object of %s on %s did not settle", name, cluster)
}

func requestCorrection(t *testing.T, name, token string) {
	t.Helper()
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[holdfastv1.ReconcileRequestedAtAnnotation] = token
	})
}

func resourceNamed(rs []holdfastv1.ResourceStatus, kind, name string) holdfastv1.ResourceStatus {
	for _, r := range rs {
		if r.Kind == kind && r.Name == name {
			return r
		}
	}
	return holdfastv1.ResourceStatus{}
}

// TestDriftReportThenManualCorrection: with action Report, an edit and a deletion are recorded
// (state, author, fields) and left as they are; a manual request corrects both and marks the
// records corrected.
func TestDriftReportThenManualCorrection(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a", "b")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift:    &holdfastv1.DriftPolicy{Action: holdfastv1.DriftActionReport},
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")

	deleteOutOfBand(t, "cluster-1", ns, "a")
	editConfigMap(t, "cluster-1", ns, "b", "kubectl-edit", "cluster", "edited-by-hand")
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		b := resourceNamed(css.Status.Resources, "ConfigMap", "b")
		g.Expect(b.State).To(Equal(holdfastv1.ResourceDrifted))
		g.Expect(b.LastDrift).NotTo(BeNil())
		g.Expect(b.LastDrift.Manager).To(Equal("kubectl-edit"))
		g.Expect(b.LastDrift.Fields).To(ContainElement(holdfastv1.FieldChange{Path: ".data.cluster", Old: `"cluster-1"`, New: `"edited-by-hand"`}))
		g.Expect(resourceNamed(css.Status.Resources, "ConfigMap", "a").State).To(Equal(holdfastv1.ResourceMissing))
		g.Expect(css.Status.DriftedCount).To(BeEquivalentTo(2))
		drifted := condition(css.Status.Conditions, holdfastv1.DriftedCondition)
		g.Expect(drifted.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(drifted.Message).To(ContainSubstring("kubectl-edit"))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "b"), HaveField("CorrectedTime", BeNil()))))
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "a"), HaveField("Type", holdfastv1.DriftDeleted))))
	})
	eventually(t, func(g Gomega) {
		m := &holdfastv1.MultiClusterService{}
		g.Expect(hub.Get(context.Background(), client.ObjectKey{Name: name}, m)).To(Succeed())
		g.Expect(m.Status.DriftedClusters).To(BeEquivalentTo(1))
		g.Expect(m.Status.DriftedObjects).To(BeEquivalentTo(2))
	})
	consistently(t, 2*time.Second, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data).To(HaveKeyWithValue("cluster", "edited-by-hand"))
		expectNoConfigMap(g, "cluster-1", ns, "a")
	})

	t.Log("A manual request corrects")
	requestCorrection(t, name, "fix-it-now")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		getConfigMap(g, "cluster-1", ns, "a")
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.LastHandledReconcileAt).To(Equal("fix-it-now"))
		g.Expect(css.Status.DriftedCount).To(BeZero())
		g.Expect(condition(css.Status.Conditions, holdfastv1.DriftedCondition).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(resourceNamed(css.Status.Resources, "ConfigMap", "b").LastDrift).To(BeNil())
		for _, d := range css.Status.Drifts {
			g.Expect(d.CorrectedTime).NotTo(BeNil(), "record of %s", d.Name)
		}
	})
}

// TestCorrectionWindow: with action Report and a correction window, drift waits outside the
// window and is corrected once it is open.
func TestCorrectionWindow(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	// The controllers' clock only ever moves forward (other tests moved it too).
	opens := clk.Now().UTC().Add(2 * time.Hour).Truncate(time.Minute)
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift: &holdfastv1.DriftPolicy{Action: holdfastv1.DriftActionReport, CorrectionWindows: []holdfastv1.CorrectionWindow{{
			Start: opens.Format("15:04"), Duration: metav1.Duration{Duration: time.Hour}}}},
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	editConfigMap(t, "cluster-1", ns, "a", "kubectl-edit", "cluster", "edited-out-of-hours")
	eventually(t, func(g Gomega) {
		g.Expect(resourceNamed(statusOf(g, name, "cluster-1").Status.Resources, "ConfigMap", "a").State).To(Equal(holdfastv1.ResourceDrifted))
	})
	consistently(t, time.Second, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "edited-out-of-hours"))
	})

	t.Log("The window opens (the controller's clock moves there; the Cluster is touched to bring the reconcile the timer would)")
	clk.SetTime(opens.Add(time.Minute))
	eventually(t, func(g Gomega) {
		c := &holdfastv1.Cluster{}
		g.Expect(hub.Get(context.Background(), clusterKey("cluster-1"), c)).To(Succeed())
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations["test.holdfast.dev/poke"] = name
		g.Expect(hub.Update(context.Background(), c)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.DriftedCount).To(BeZero())
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "a"), HaveField("CorrectedTime", Not(BeNil())))))
	})
}

// deploymentYAML is a Deployment with replicas, for the ignore rule that leaves them to an
// autoscaler.
func deploymentYAML(ns, name string) string { return labelledDeployment(ns, name, name) }

// labelledDeployment is deploymentYAML whose selector and pod labels say app: label.
func labelledDeployment(ns, name, label string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  replicas: 2
  selector:
    matchLabels: {app: %[3]s}
  template:
    metadata:
      labels: {app: %[3]s}
    spec:
      containers:
      - name: app
        image: registry.example/app:1
`, ns, name, label)
}

// TestIgnoredFieldsAndOptedOutService: an ignored field changed by another manager (an
// autoscaler scaling a Deployment) is neither reported nor corrected, not even by a full
// reconcile, while other fields of the same object still are; a service that opted out of
// drift handling is left as changed.
func TestIgnoredFieldsAndOptedOutService(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
		Inline: configMaps(ns, "a") + "---\n" + deploymentYAML(ns, "web")})
	createTemplate(t, name+"-free", holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
		Inline: fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: free\n  namespace: %s\ndata:\n  cluster: '{{ .Cluster.Name }}'\n", ns)})
	free := service("free", name+"-free", ns)
	free.Drift = &holdfastv1.ServiceDriftPolicy{Disabled: true}
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift: &holdfastv1.DriftPolicy{Ignore: []holdfastv1.IgnoreRule{{
			Paths: []string{"/spec/replicas"}, Target: &holdfastv1.ResourceSelector{Group: ptr.To("apps"), Kind: "Deployment"}}}},
		Services: []holdfastv1.Service{service("web", name, ns), free},
	})
	expectReady(t, name, "cluster-1")
	ctx := context.Background()
	c1 := targets["cluster-1"]

	t.Log("An autoscaler scales the Deployment")
	eventually(t, func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, dep)).To(Succeed())
		scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 5}}
		g.Expect(c1.SubResource("scale").Update(ctx, dep, client.WithSubResourceBody(scale), client.FieldOwner("horizontal-pod-autoscaler"))).To(Succeed())
	})
	t.Log("Someone edits the opted-out service's ConfigMap")
	editConfigMap(t, "cluster-1", ns, "free", "kubectl-edit", "cluster", "theirs")
	t.Log("A full reconcile runs")
	requestCorrection(t, name, "full-pass")
	eventually(t, func(g Gomega) {
		g.Expect(statusOf(g, name, "cluster-1").Status.LastHandledReconcileAt).To(Equal("full-pass"))
	})
	consistently(t, 2*time.Second, func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, dep)).To(Succeed())
		g.Expect(*dep.Spec.Replicas).To(BeEquivalentTo(5))
		g.Expect(getConfigMap(g, "cluster-1", ns, "free").Data).To(HaveKeyWithValue("cluster", "theirs"))
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Drifts).NotTo(ContainElement(HaveField("Name", "web")))
		g.Expect(css.Status.Drifts).NotTo(ContainElement(HaveField("Name", "free")))
		g.Expect(resourceNamed(css.Status.Resources, "ConfigMap", "free").State).To(Equal(holdfastv1.ResourceIgnored))
		g.Expect(resourceNamed(css.Status.Resources, "Deployment", "web").State).To(Equal(holdfastv1.ResourceInSync))
	})

	t.Log("Another field of the scaled Deployment is still corrected, and replicas stay the autoscaler's")
	eventually(t, func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, dep)).To(Succeed())
		dep.Spec.Template.Spec.Containers[0].Image = "registry.example/app:hotfix"
		g.Expect(c1.Update(ctx, dep, client.FieldOwner("kubectl-set-image"))).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, dep)).To(Succeed())
		g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example/app:1"))
		g.Expect(*dep.Spec.Replicas).To(BeEquivalentTo(5))
		g.Expect(statusOf(g, name, "cluster-1").Status.Drifts).To(ContainElement(And(HaveField("Name", "web"),
			HaveField("Manager", "kubectl-set-image"), HaveField("CorrectedTime", Not(BeNil())),
			HaveField("Fields", ConsistOf(HaveField("Path", `.spec.template.spec.containers[name="app"].image`))))))
	})
}

// TestFightIsDetected: another manager reverting every correction makes the object Contested
// after the configured number of corrections; correction stops (no apply loop) until a manual
// request, which resumes it.
// TestFightIsDetected: with the fight action Stop, an object changed back after every
// correction becomes Contested and is left alone until a manual request.
func TestFightIsDetected(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift: &holdfastv1.DriftPolicy{Fight: &holdfastv1.FightPolicy{MaxCorrections: 3, Window: &metav1.Duration{Duration: 5 * time.Minute},
			Action: holdfastv1.FightStop}},
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")

	fightRounds(t, ns, 3)
	t.Log("The fourth revert within the window is not corrected")
	editConfigMap(t, "cluster-1", ns, "a", "other-controller", "cluster", "theirs-4")
	expectContested(t, name, "until a manual request")
	rv := getConfigMap(NewWithT(t), "cluster-1", ns, "a").ResourceVersion
	consistently(t, 2*time.Second, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").ResourceVersion).To(Equal(rv), "Holdfast kept writing a contested object")
	})

	t.Log("A manual request resumes correction")
	requestCorrection(t, name, "resume")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		css := statusOf(g, name, "cluster-1")
		g.Expect(resourceNamed(css.Status.Resources, "ConfigMap", "a").State).To(Equal(holdfastv1.ResourceInSync))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ContestedCondition).Status).To(Equal(metav1.ConditionFalse))
	})
}

// TestFightKeepsCorrectingWithBackoff: by default a Contested object is still corrected, with
// a backoff, however often someone changes it back: editing an object a few times never switches
// its correction off. Once the other manager stops, the object is no longer Contested after a
// window.
func TestFightKeepsCorrectingWithBackoff(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a")})
	window := 12 * time.Second
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift: &holdfastv1.DriftPolicy{Fight: &holdfastv1.FightPolicy{MaxCorrections: 3, Window: &metav1.Duration{Duration: window},
			MaxBackoff: &metav1.Duration{Duration: 2 * time.Second}}},
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")

	fightRounds(t, ns, 3)
	for round := 4; round <= 6; round++ {
		t.Logf("Revert %d: Contested, and corrected anyway after the backoff", round)
		editConfigMap(t, "cluster-1", ns, "a", "other-controller", "cluster", fmt.Sprintf("theirs-%d", round))
		if round == 4 {
			expectContested(t, name, "next correction at")
		}
		eventually(t, func(g Gomega) {
			g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "cluster-1"), "round %d", round)
			css := statusOf(g, name, "cluster-1")
			a := resourceNamed(css.Status.Resources, "ConfigMap", "a")
			g.Expect(a.State).To(Equal(holdfastv1.ResourceContested), "the fight is not over while the other manager keeps going")
			g.Expect(a.Message).To(ContainSubstring("corrected again at"))
			g.Expect(condition(css.Status.Conditions, holdfastv1.ContestedCondition).Status).To(Equal(metav1.ConditionTrue))
		})
	}
	eventually(t, func(g Gomega) {
		g.Expect(warningNotes(g, statusOf(g, name, "cluster-1").Name, "Contested")).To(ContainElement(And(ContainSubstring("other-controller"), ContainSubstring("next correction at"))),
			"one Warning Event when the object became Contested, saying that correction goes on")
	})

	t.Log("The other manager stops: a window later the object is no longer Contested")
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(resourceNamed(css.Status.Resources, "ConfigMap", "a").State).To(Equal(holdfastv1.ResourceInSync))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ContestedCondition).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	})
}

// fightRounds changes ConfigMap a back rounds times on cluster-1, each time after Holdfast
// corrected it.
func fightRounds(t *testing.T, ns string, rounds int) {
	t.Helper()
	for round := 1; round <= rounds; round++ {
		editConfigMap(t, "cluster-1", ns, "a", "other-controller", "cluster", fmt.Sprintf("theirs-%d", round))
		eventually(t, func(g Gomega) {
			g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "cluster-1"), "round %d", round)
		})
	}
}

// expectContested waits until ConfigMap a is Contested naming the other manager, with message
// in its state's message, and the Contested condition says so.
func expectContested(t *testing.T, name, message string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		a := resourceNamed(css.Status.Resources, "ConfigMap", "a")
		g.Expect(a.State).To(Equal(holdfastv1.ResourceContested))
		g.Expect(a.Message).To(And(ContainSubstring("other-controller"), ContainSubstring(message)))
		contested := condition(css.Status.Conditions, holdfastv1.ContestedCondition)
		g.Expect(contested.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(contested.Message).To(ContainSubstring("other-controller"))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Reason).To(Equal(holdfastv1.ContestedReason))
	})
}

// TestDriftWhileDisconnectedIsFound: changes made while Holdfast cannot reach the cluster (its
// watches broken) are found and corrected once it can again.
func TestDriftWhileDisconnectedIsFound(t *testing.T) {
	name, ns := deployWatched(t, "prod", "cluster-2")

	partitioned.Store("cluster-2", true)
	healed := false
	heal := func() {
		if !healed {
			partitioned.Delete("cluster-2")
			healed = true
		}
	}
	t.Cleanup(heal)
	eventually(t, func(g Gomega) {
		c := &holdfastv1.Cluster{}
		g.Expect(hub.Get(context.Background(), clusterKey("cluster-2"), c)).To(Succeed())
		g.Expect(condition(c.Status.Conditions, holdfastv1.ClusterConnectedCondition).Status).To(Equal(metav1.ConditionFalse))
	})
	deleteOutOfBand(t, "cluster-2", ns, "a")
	editConfigMap(t, "cluster-2", ns, "b", "kubectl-edit", "cluster", "changed-during-outage")
	heal()

	eventually(t, func(g Gomega) {
		getConfigMap(g, "cluster-2", ns, "a")
		g.Expect(getConfigMap(g, "cluster-2", ns, "b").Data).To(HaveKeyWithValue("cluster", "cluster-2"))
		css := statusOf(g, name, "cluster-2")
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "a"), HaveField("Type", holdfastv1.DriftDeleted), HaveField("CorrectedTime", Not(BeNil())))))
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "b"), HaveField("Manager", "kubectl-edit"),
			HaveField("Fields", ContainElement(HaveField("Path", ".data.cluster"))), HaveField("CorrectedTime", Not(BeNil())))))
	})
	for _, d := range statusOf(NewWithT(t), name, "cluster-2").Status.Drifts {
		t.Logf("%s %s %s found by %s", d.Type, d.Kind, d.Name, d.Detection)
	}
}

// TestDriftWhileWatchesExpireIsFound: the controller's watches on a cluster break while the
// cluster stays reachable, a change is made while no watch is open, and by the time the
// watches can be opened again the revision they would resume from is gone (410 Gone, as after
// an etcd compaction). The relist that follows finds the change, with its author, and it is
// corrected.
func TestDriftWhileWatchesExpireIsFound(t *testing.T) {
	name, ns := deployWatched(t, "dev", "cluster-1")

	const cms = "cluster-1/configmaps"
	refusedBefore, expiredBefore := countOf(&refusedWatches, cms), countOf(&expiredWatches, cms)
	breakWatches("cluster-1")
	t.Cleanup(func() { healWatches("cluster-1") })
	eventually(t, func(g Gomega) {
		g.Expect(countOf(&refusedWatches, cms)).To(BeNumerically(">", refusedBefore), "the controller has not tried to watch ConfigMaps again yet")
	})
	// No watch of the controller's is open now.
	editConfigMap(t, "cluster-1", ns, "b", "kubectl-edit", "cluster", "changed-while-not-watched")
	rv, err := strconv.ParseInt(getConfigMap(NewWithT(t), "cluster-1", ns, "b").ResourceVersion, 10, 64)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	consistently(t, 2*time.Second, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data).To(HaveKeyWithValue("cluster", "changed-while-not-watched"),
			"the change was seen while no watch was open")
	})
	expireWatches("cluster-1", rv)

	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "b"), HaveField("Manager", "kubectl-edit"),
			HaveField("Detection", holdfastv1.DriftDetectedByWatch),
			HaveField("Fields", ContainElement(holdfastv1.FieldChange{Path: ".data.cluster", Old: `"cluster-1"`, New: `"changed-while-not-watched"`})),
			HaveField("CorrectedTime", Not(BeNil())))))
	})
	NewWithT(t).Expect(countOf(&expiredWatches, cms)).To(BeNumerically(">", expiredBefore), "no watch was answered 410 Gone")
	c := &holdfastv1.Cluster{}
	NewWithT(t).Expect(hub.Get(context.Background(), clusterKey("cluster-1"), c)).To(Succeed())
	NewWithT(t).Expect(condition(c.Status.Conditions, holdfastv1.ClusterConnectedCondition).Status).To(Equal(metav1.ConditionTrue),
		"the cluster stayed reachable: found by the relist, not by a reconnect comparison")
	t.Logf("watch requests refused: %d, answered 410 Gone: %d",
		countOf(&refusedWatches, cms)-refusedBefore, countOf(&expiredWatches, cms)-expiredBefore)

	t.Log("The watches resumed: a later change is seen as it happens")
	healWatches("cluster-1")
	editConfigMap(t, "cluster-1", ns, "a", "kubectl-edit", "cluster", "changed-after")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		g.Expect(statusOf(g, name, "cluster-1").Status.Drifts).To(ContainElement(And(HaveField("Name", "a"),
			HaveField("Manager", "kubectl-edit"), HaveField("Detection", holdfastv1.DriftDetectedByWatch), HaveField("CorrectedTime", Not(BeNil())))))
	})
}

// TestDriftWhileControllerDownIsFound: drift made while the controller is not running is found
// and corrected when it starts, by comparison (the change itself was never seen).
func TestDriftWhileControllerDownIsFound(t *testing.T) {
	name, ns := deployWatched(t, "dev", "cluster-1")

	NewWithT(t).Expect(stopManager()).To(Succeed())
	deleteOutOfBand(t, "cluster-1", ns, "a")
	editConfigMap(t, "cluster-1", ns, "b", "kubectl-edit", "cluster", "changed-while-down")
	NewWithT(t).Expect(startManager()).To(Succeed())

	eventually(t, func(g Gomega) {
		getConfigMap(g, "cluster-1", ns, "a")
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "a"), HaveField("Type", holdfastv1.DriftDeleted),
			HaveField("Detection", holdfastv1.DriftDetectedByComparison), HaveField("CorrectedTime", Not(BeNil())))))
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "b"), HaveField("Manager", "kubectl-edit"),
			HaveField("Detection", holdfastv1.DriftDetectedByComparison),
			HaveField("Fields", ContainElement(holdfastv1.FieldChange{Path: ".data.cluster", Old: `"cluster-1"`, New: `"changed-while-down"`})),
			HaveField("CorrectedTime", Not(BeNil())))))
	})
}

// TestDeletedNamespaceIsRecreated: deleting a managed namespace (kube-controller-manager then
// deletes everything in it) is drift: once the namespace is gone it is recreated, then its
// objects.
func TestDeletedNamespaceIsRecreated(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	ctx := context.Background()
	nsObj := &corev1.Namespace{}
	NewWithT(t).Expect(targets["cluster-1"].Get(ctx, client.ObjectKey{Name: ns}, nsObj)).To(Succeed())
	uid := nsObj.UID
	NewWithT(t).Expect(targets["cluster-1"].Delete(ctx, nsObj)).To(Succeed())

	eventually(t, func(g Gomega) {
		now := &corev1.Namespace{}
		g.Expect(targets["cluster-1"].Get(ctx, client.ObjectKey{Name: ns}, now)).To(Succeed())
		g.Expect(now.UID).NotTo(Equal(uid))
		g.Expect(now.DeletionTimestamp).To(BeNil())
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Kind", "Namespace"), HaveField("Type", holdfastv1.DriftDeleted))))
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "a"), HaveField("Type", holdfastv1.DriftDeleted))))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	}, "namespace and ConfigMap recreated")
}

// TestScaleRelabelAndNoFalseDrift: a scale through the scale subresource and a label Holdfast
// set, changed by someone else, are restored and recorded with their author; an annotation
// someone adds, API defaulting and the status kube-controller-manager writes are not drift.
func TestScaleRelabelAndNoFalseDrift(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
		Inline: configMaps(ns, "a") + "---\n" + deploymentYAML(ns, "web")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	ctx := context.Background()
	c1 := targets["cluster-1"]
	dep := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: ns, Name: "web"}

	t.Log("Defaulting and kube-controller-manager's status writes (ReplicaSet, observedGeneration) are no drift")
	eventually(t, func(g Gomega) {
		g.Expect(c1.Get(ctx, key, dep)).To(Succeed())
		g.Expect(dep.Status.ObservedGeneration).To(BeNumerically(">=", 1))
		g.Expect(dep.Spec.Strategy.Type).NotTo(BeEmpty()) // defaulted by the API server
	})
	consistently(t, 2*time.Second, func(g Gomega) {
		g.Expect(statusOf(g, name, "cluster-1").Status.DriftCount).To(BeZero())
	})

	t.Log("A new declaration applied by Holdfast is no drift either")
	updateTemplate(t, name, func(st *holdfastv1.ServiceTemplate) {
		st.Spec.Inline = strings.ReplaceAll(st.Spec.Inline, "registry.example/app:1", "registry.example/app:2")
	})
	eventually(t, func(g Gomega) {
		g.Expect(c1.Get(ctx, key, dep)).To(Succeed())
		g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example/app:2"))
	})
	consistently(t, 2*time.Second, func(g Gomega) {
		g.Expect(statusOf(g, name, "cluster-1").Status.DriftCount).To(BeZero())
	})
	deployedImage := "registry.example/app:2"

	t.Log("Scaled through the scale subresource")
	eventually(t, func(g Gomega) {
		g.Expect(c1.Get(ctx, key, dep)).To(Succeed())
		scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 4}}
		g.Expect(c1.SubResource("scale").Update(ctx, dep, client.WithSubResourceBody(scale), client.FieldOwner("kubectl-scale"))).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		g.Expect(c1.Get(ctx, key, dep)).To(Succeed())
		g.Expect(*dep.Spec.Replicas).To(BeEquivalentTo(2))
		g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal(deployedImage))
		g.Expect(statusOf(g, name, "cluster-1").Status.Drifts).To(ContainElement(And(HaveField("Name", "web"),
			HaveField("Manager", "kubectl-scale"), HaveField("Subresource", "scale"),
			HaveField("Fields", ContainElement(holdfastv1.FieldChange{Path: ".spec.replicas", Old: "2", New: "4"})),
			HaveField("CorrectedTime", Not(BeNil())))))
	})

	t.Log("A label Holdfast set, changed")
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "a")
		cm.Labels[holdfastv1.ServiceLabel] = "relabelled"
		g.Expect(c1.Update(ctx, cm, client.FieldOwner("kubectl-label"))).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Labels).To(HaveKeyWithValue(holdfastv1.ServiceLabel, "web"))
		g.Expect(statusOf(g, name, "cluster-1").Status.Drifts).To(ContainElement(And(HaveField("Name", "a"),
			HaveField("Manager", "kubectl-label"),
			HaveField("Fields", ContainElement(holdfastv1.FieldChange{Path: ".metadata.labels." + holdfastv1.ServiceLabel, Old: `"web"`, New: `"relabelled"`})),
			HaveField("CorrectedTime", Not(BeNil())))))
	})

	t.Log("An annotation someone else adds is no drift: nothing recorded, nothing written")
	before := statusOf(NewWithT(t), name, "cluster-1").Status.DriftCount
	cm := &corev1.ConfigMap{}
	eventually(t, func(g Gomega) {
		cm = getConfigMap(g, "cluster-1", ns, "a")
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations["example.com/owner-team"] = "payments"
		g.Expect(c1.Update(ctx, cm, client.FieldOwner("kubectl-annotate"))).To(Succeed())
	})
	rv := cm.ResourceVersion
	consistently(t, 2*time.Second, func(g Gomega) {
		now := getConfigMap(g, "cluster-1", ns, "a")
		g.Expect(now.Annotations).To(HaveKeyWithValue("example.com/owner-team", "payments"))
		g.Expect(now.ResourceVersion).To(Equal(rv))
		g.Expect(statusOf(g, name, "cluster-1").Status.DriftCount).To(Equal(before))
	})
}

// crdYAML declares a namespaced kind Gadget in group <group>, and one Gadget.
func crdYAML(group, ns string) string {
	return testsupport.CRD(group, "Gadget") + fmt.Sprintf(`---
apiVersion: %[1]s/v1
kind: Gadget
metadata:
  name: g
  namespace: %[2]s
spec:
  size: 3
`, group, ns)
}

// TestDeletedCRDIsRecreated: deleting a managed CRD (the API server then deletes its custom
// resources) is drift: the CRD is recreated first, then, once it is Established, its objects.
func TestDeletedCRDIsRecreated(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	group := "drift-crd.holdfast.test"
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns) + "---\n" + crdYAML(group, ns)})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	ctx := context.Background()
	c1 := targets["cluster-1"]
	object := func(group, kind string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind})
		return u
	}
	crd := object("apiextensions.k8s.io", "CustomResourceDefinition")
	NewWithT(t).Expect(c1.Get(ctx, client.ObjectKey{Name: "gadgets." + group}, crd)).To(Succeed())
	uid := crd.GetUID()
	NewWithT(t).Expect(c1.Delete(ctx, crd)).To(Succeed())

	eventually(t, func(g Gomega) {
		now := object("apiextensions.k8s.io", "CustomResourceDefinition")
		g.Expect(c1.Get(ctx, client.ObjectKey{Name: "gadgets." + group}, now)).To(Succeed())
		g.Expect(now.GetUID()).NotTo(Equal(uid))
		g2 := object(group, "Gadget")
		g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "g"}, g2)).To(Succeed())
		size, _, _ := unstructured.NestedInt64(g2.Object, "spec", "size")
		g.Expect(size).To(BeEquivalentTo(3))
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Kind", "CustomResourceDefinition"), HaveField("Type", holdfastv1.DriftDeleted))))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	}, "CRD and its Gadget recreated")
}

// TestInvalidDriftPolicy: a drift policy part that cannot be used (a window longer than a day,
// a bad label selector in an ignore rule) is named on the Drifted condition with reason
// InvalidDriftPolicy; the services still deploy and drift is still corrected.
func TestInvalidDriftPolicy(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift: &holdfastv1.DriftPolicy{
			CorrectionWindows: []holdfastv1.CorrectionWindow{{Start: "02:00", Duration: metav1.Duration{Duration: 25 * time.Hour}}},
			Ignore: []holdfastv1.IgnoreRule{{Paths: []string{"/data/x"}, Target: &holdfastv1.ResourceSelector{
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}}}},
		},
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		drifted := condition(css.Status.Conditions, holdfastv1.DriftedCondition)
		g.Expect(drifted.Status).To(Equal(metav1.ConditionUnknown))
		g.Expect(drifted.Reason).To(Equal(holdfastv1.InvalidDriftPolicyReason))
		g.Expect(drifted.Message).To(ContainSubstring("correctionWindows[0]"))
		g.Expect(drifted.Message).To(ContainSubstring("labelSelector"))
		g.Expect(condition(css.Status.Conditions, holdfastv1.AppliedCondition).Status).To(Equal(metav1.ConditionTrue))
		getConfigMap(g, "cluster-1", ns, "a")
	})
	editConfigMap(t, "cluster-1", ns, "a", "kubectl-edit", "cluster", "edited-by-hand")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
	})
}

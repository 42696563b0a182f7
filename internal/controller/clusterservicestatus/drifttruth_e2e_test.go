package clusterservicestatus_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview"
)

// restoreWithin is how soon a drift someone else put back must be seen to end: well below the
// 15 s after which the issue found it still open, and than any periodic reconcile.
const restoreWithin = 10 * time.Second

// TestHumanRestoreClosesTheRecord (issue 28, point 1): in Report mode, an edit and a deletion wait
// for a correction. Someone puts the declared value back by hand, and re-creates the deleted
// object as declared: no Holdfast correction is needed, and none is asked for; each record closes
// on its own, Restored (not Corrected) by who did it, the objects are InSync again and the status
// object Ready, and `holdfast history` says who restored them.
func TestHumanRestoreClosesTheRecord(t *testing.T) {
	ctx := context.Background()
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a", "b")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift:    &holdfastv1.DriftPolicy{Action: holdfastv1.DriftActionReport},
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")

	var declaredA *corev1.ConfigMap
	eventually(t, func(g Gomega) { declaredA = getConfigMap(g, "cluster-1", ns, "a") })
	deleteOutOfBand(t, "cluster-1", ns, "a")
	editConfigMap(t, "cluster-1", ns, "b", "kubectl-edit", "cluster", "edited-by-hand")
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(resourceNamed(css.Status.Resources, "ConfigMap", "b").State).To(Equal(holdfastv1.ResourceDrifted))
		g.Expect(resourceNamed(css.Status.Resources, "ConfigMap", "a").State).To(Equal(holdfastv1.ResourceMissing))
	})

	t.Log("A human puts b's declared value back")
	editConfigMap(t, "cluster-1", ns, "b", "kubectl-edit", "cluster", "cluster-1")
	// Soon: the watch's event brings it, not a periodic reconcile.
	NewWithT(t).Eventually(func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		b := resourceNamed(css.Status.Resources, "ConfigMap", "b")
		g.Expect(b.State).To(Equal(holdfastv1.ResourceInSync))
		g.Expect(b.LastDrift).To(BeNil())
		g.Expect(css.Status.DriftedCount).To(BeEquivalentTo(1))
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "b"), HaveField("CorrectedTime", Not(BeNil())),
			HaveField("Resolution", holdfastv1.DriftRestored), HaveField("RestoredBy", HaveValue(HaveField("Manager", "kubectl-edit"))))))
	}).WithTimeout(restoreWithin).WithPolling(poll).Should(Succeed())

	t.Log("A human re-creates a as declared")
	recreated := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a",
		Labels: declaredA.Labels, Annotations: declaredA.Annotations}, Data: declaredA.Data}
	NewWithT(t).Expect(targets["cluster-1"].Create(ctx, recreated, client.FieldOwner("kubectl-create"))).To(Succeed())
	var css *holdfastv1.ClusterServiceStatus
	eventually(t, func(g Gomega) {
		css = statusOf(g, name, "cluster-1")
		g.Expect(resourceNamed(css.Status.Resources, "ConfigMap", "a").State).To(Equal(holdfastv1.ResourceInSync))
		g.Expect(css.Status.DriftedCount).To(BeZero())
		g.Expect(condition(css.Status.Conditions, holdfastv1.DriftedCondition).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "a"), HaveField("Type", holdfastv1.DriftDeleted),
			HaveField("Resolution", holdfastv1.DriftRestored), HaveField("RestoredBy", HaveValue(HaveField("Manager", "kubectl-create"))))))
	})
	g := NewWithT(t)
	g.Expect(css.Status.LastHandledReconcileAt).To(BeEmpty(), "no correction was requested")
	for _, d := range css.Status.Drifts {
		g.Expect(d.Resolution).To(Equal(holdfastv1.DriftRestored), "record of %s: nothing was Holdfast's to correct", d.Name)
	}

	var out bytes.Buffer
	g.Expect(fleetview.PrintDriftHistory(&out, fleetview.BuildDriftHistory([]holdfastv1.ClusterServiceStatus{*css}, fleetview.Filter{}, metav1.Time{}.Time, 0))).To(Succeed())
	g.Expect(out.String()).To(And(ContainSubstring("Restored by kubectl-edit"), ContainSubstring("Restored by kubectl-create")), out.String())
	t.Log(out.String())
}

// TestFightStaysVisible (issue 28, point 3): once an object is Contested, it stays Contested, on
// its entry and in the Contested condition, with the other manager named, for as long as the
// fight lasts: after each correction that put it back too, and through a new revision of its
// set that re-applies everything. Only when it has stayed as corrected for the fight window is it
// InSync again.
func TestFightStaysVisible(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a")})
	window := 30 * time.Second
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift: &holdfastv1.DriftPolicy{Fight: &holdfastv1.FightPolicy{MaxCorrections: 2, Window: &metav1.Duration{Duration: window},
			MaxBackoff: &metav1.Duration{Duration: time.Second}}},
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")

	fightRounds(t, ns, 2)
	editConfigMap(t, "cluster-1", ns, "a", "other-controller", "cluster", "theirs-3")
	expectContested(t, name, "next correction at")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "cluster-1"), "corrected after the backoff")
	})
	began := time.Now()

	t.Log("A new revision of the set re-applies everything while the fight is live")
	updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) { tpl.Spec.Inline = configMaps(ns, "a", "b") })
	eventually(t, func(g Gomega) { getConfigMap(g, "cluster-1", ns, "b") })
	contested := func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		a := resourceNamed(css.Status.Resources, "ConfigMap", "a")
		g.Expect(a.State).To(Equal(holdfastv1.ResourceContested), "the fight is not over: the other manager may change it back any moment")
		g.Expect(a.Message).To(ContainSubstring("other-controller"))
		g.Expect(a.LastDrift).NotTo(BeNil())
		g.Expect(condition(css.Status.Conditions, holdfastv1.ContestedCondition).Status).To(Equal(metav1.ConditionTrue))
	}
	eventually(t, func(g Gomega) {
		g.Expect(resourceNamed(statusOf(g, name, "cluster-1").Status.Resources, "ConfigMap", "b").State).To(Equal(holdfastv1.ResourceInSync))
	})
	if left := window - time.Since(began); left < 10*time.Second {
		t.Fatalf("the revision took until %s before the fight window ends: too late to see the fight live", left)
	}
	consistently(t, 5*time.Second, contested)

	t.Log("A window after the last correction, the fight is over")
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(resourceNamed(css.Status.Resources, "ConfigMap", "a").State).To(Equal(holdfastv1.ResourceInSync))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ContestedCondition).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	})
}

// TestDeclaredImmutableChange (issue 28, point 5): a template change of a Deployment's selector,
// which the API server refuses to apply, is carried out by deleting and re-creating the object
// where the service set's drift.immutable.action is Recreate, with a Normal Event; where it is
// not, the entry is Failed with a message that says how to get it done, and the old object stays.
func TestDeclaredImmutableChange(t *testing.T) {
	ctx := context.Background()
	for _, recreate := range []bool{true, false} {
		t.Run(map[bool]string{true: "recreate", false: "report"}[recreate], func(t *testing.T) {
			name, ns := objName(t, ""), objName(t, "ns")
			inline := func(label string) string {
				return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n---\n%s", ns, labelledDeployment(ns, "web", label))
			}
			createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: inline("web-1")})
			spec := holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
				Services: []holdfastv1.Service{service("web", name, ns)}}
			if recreate {
				spec.Drift = &holdfastv1.DriftPolicy{Immutable: &holdfastv1.ImmutablePolicy{Action: holdfastv1.ImmutableRecreate}}
			}
			createServiceSet(t, name, spec)
			before := &appsv1.Deployment{}
			eventually(t, func(g Gomega) {
				g.Expect(targets["cluster-1"].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, before)).To(Succeed())
			})

			updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) { tpl.Spec.Inline = inline("web-2") })
			if !recreate {
				eventually(t, func(g Gomega) {
					web := resourceNamed(statusOf(g, name, "cluster-1").Status.Resources, "Deployment", "web")
					g.Expect(web.State).To(Equal(holdfastv1.ResourceFailed))
					g.Expect(web.Message).To(And(ContainSubstring("spec.selector"), ContainSubstring("drift.immutable.action: Recreate"),
						ContainSubstring("delete the object on the cluster")))
				})
				now := &appsv1.Deployment{}
				NewWithT(t).Expect(targets["cluster-1"].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, now)).To(Succeed())
				NewWithT(t).Expect(now.UID).To(Equal(before.UID), "the old object is left in place")
				return
			}
			eventually(t, func(g Gomega) {
				now := &appsv1.Deployment{}
				g.Expect(targets["cluster-1"].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, now)).To(Succeed())
				g.Expect(now.UID).NotTo(Equal(before.UID), "re-created")
				g.Expect(now.Spec.Selector.MatchLabels).To(HaveKeyWithValue("app", "web-2"))
				css := statusOf(g, name, "cluster-1")
				g.Expect(resourceNamed(css.Status.Resources, "Deployment", "web").State).To(Equal(holdfastv1.ResourceInSync))
				g.Expect(eventNotes(g, css.Name, "Recreated", corev1.EventTypeNormal)).To(ContainElement(
					And(ContainSubstring("Deployment"), ContainSubstring("spec.selector"), ContainSubstring("Recreate"))))
				g.Expect(css.Status.DriftCount).To(BeZero(), "a declared change is no drift")
			})
		})
	}
}

// TestClusterRegisteredTwice (issue 28, point 2): a second Cluster with cluster-1's kubeconfig is
// the same cluster registered twice. Both Clusters say so (DuplicateRegistration, naming each
// other, with the cluster's ID, the UID of its kube-system namespace). A service set matching
// both declares the namespace the same way through both, which both apply; its ConfigMap, whose
// data names the registration, differently: that is a conflict in both status objects, naming
// the other registration, and neither keeps rewriting it.
func TestClusterRegisteredTwice(t *testing.T) {
	ctx := context.Background()
	name, ns := objName(t, ""), objName(t, "ns")
	first := &holdfastv1.Cluster{}
	NewWithT(t).Expect(hub.Get(ctx, clusterKey("cluster-1"), first)).To(Succeed())
	again := &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: first.Namespace, Name: objName(t, "again"),
		Labels: map[string]string{"twice": name}}, Spec: first.Spec}
	NewWithT(t).Expect(hub.Create(ctx, again)).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(context.Background(), again) })
	setClusterLabel(t, "cluster-1", "twice", name)
	t.Cleanup(func() { setClusterLabel(t, "cluster-1", "twice", "") })

	eventually(t, func(g Gomega) {
		for _, c := range []struct{ name, other string }{{"cluster-1", again.Name}, {again.Name, "cluster-1"}} {
			got := &holdfastv1.Cluster{}
			g.Expect(hub.Get(ctx, clusterKey(c.name), got)).To(Succeed())
			g.Expect(got.Status.ClusterID).NotTo(BeEmpty())
			dup := condition(got.Status.Conditions, holdfastv1.DuplicateRegistrationCondition)
			g.Expect(dup.Status).To(Equal(metav1.ConditionTrue), "Cluster %s", c.name)
			g.Expect(dup.Message).To(And(ContainSubstring(c.other), ContainSubstring(got.Status.ClusterID)))
		}
	})

	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"twice": name}}},
		Services:        []holdfastv1.Service{service("web", name, ns)},
	})
	eventually(t, func(g Gomega) {
		for _, c := range []struct{ name, other string }{{"cluster-1", again.Name}, {again.Name, "cluster-1"}} {
			css := statusOf(g, name, c.name)
			a := resourceNamed(css.Status.Resources, "ConfigMap", "a")
			g.Expect(a.State).To(Equal(holdfastv1.ResourceConflict), "status object of %s", c.name)
			g.Expect(a.ConflictWith).To(And(ContainSubstring(c.other), ContainSubstring("registered twice")))
			g.Expect(resourceNamed(css.Status.Resources, "Namespace", ns).State).To(Equal(holdfastv1.ResourceInSync), "declared the same way")
		}
	})
	cm := getConfigMap(NewWithT(t), "cluster-1", ns, "a")
	consistently(t, 5*time.Second, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").ResourceVersion).To(Equal(cm.ResourceVersion), "rewritten by one of the two registrations")
	})

	t.Log("The second registration goes: the first applies its declaration")
	NewWithT(t).Expect(hub.Delete(ctx, again)).To(Succeed())
	eventually(t, func(g Gomega) {
		got := &holdfastv1.Cluster{}
		g.Expect(hub.Get(ctx, clusterKey("cluster-1"), got)).To(Succeed())
		g.Expect(condition(got.Status.Conditions, holdfastv1.DuplicateRegistrationCondition).Status).To(Equal(metav1.ConditionFalse))
	})
	requestCorrection(t, name, "after-the-copy")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		g.Expect(resourceNamed(statusOf(g, name, "cluster-1").Status.Resources, "ConfigMap", "a").State).To(Equal(holdfastv1.ResourceInSync))
	})
}

// TestBinaryValuesShownAsDigests (issue 28, point 4): an edit of a ConfigMap's binaryData is
// recorded with the value's size and SHA-256, never its base64 text, in status.drifts, the
// entry's lastDrift, and `holdfast drift` and `holdfast history` in every output.
func TestBinaryValuesShownAsDigests(t *testing.T) {
	ctx := context.Background()
	name, ns := objName(t, ""), objName(t, "ns")
	declared := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xfe, 0xed}, 512))
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: fmt.Sprintf(
		"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %[1]s\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: blob\n  namespace: %[1]s\nbinaryData:\n  firmware: %[2]s\n", ns, declared)})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift:    &holdfastv1.DriftPolicy{Action: holdfastv1.DriftActionReport},
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")

	edited := bytes.Repeat([]byte{0xba, 0xad}, 700)
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "blob")
		cm.BinaryData["firmware"] = edited
		g.Expect(targets["cluster-1"].Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())
	})
	sum := sha256.Sum256(edited)
	want := fmt.Sprintf("<binary: 1400 bytes, sha256:%s…>", hex.EncodeToString(sum[:])[:16])
	var css *holdfastv1.ClusterServiceStatus
	eventually(t, func(g Gomega) {
		css = statusOf(g, name, "cluster-1")
		blob := resourceNamed(css.Status.Resources, "ConfigMap", "blob")
		g.Expect(blob.State).To(Equal(holdfastv1.ResourceDrifted))
		g.Expect(blob.LastDrift).NotTo(BeNil())
		g.Expect(blob.LastDrift.Fields).To(ContainElement(And(HaveField("Path", ".binaryData.firmware"), HaveField("New", want),
			HaveField("Old", HavePrefix("<binary: 1024 bytes, sha256:")))))
		g.Expect(css.Status.Drifts).To(ContainElement(HaveField("Fields", ContainElement(HaveField("New", want)))))
	})
	statuses := []holdfastv1.ClusterServiceStatus{*css}
	var out bytes.Buffer
	g := NewWithT(t)
	g.Expect(fleetview.WriteJSON(&out, fleetview.BuildDriftList(statuses, fleetview.Filter{}, true))).To(Succeed())
	g.Expect(fleetview.PrintDriftListWide(&out, fleetview.BuildDriftList(statuses, fleetview.Filter{}, true), time.Now())).To(Succeed())
	g.Expect(fleetview.PrintDriftHistoryWide(&out, fleetview.BuildDriftHistory(statuses, fleetview.Filter{}, time.Time{}, 0))).To(Succeed())
	raw, err := json.Marshal(css.Status)
	g.Expect(err).NotTo(HaveOccurred())
	for _, text := range []string{out.String(), string(raw)} {
		g.Expect(text).To(ContainSubstring(strings.Trim(want, "<>"))) // JSON escapes < and >
		g.Expect(text).NotTo(ContainSubstring(base64.StdEncoding.EncodeToString(edited)[:24]), "base64 text of the edited value")
		g.Expect(text).NotTo(ContainSubstring(declared[:24]), "base64 text of the declared value")
	}
}

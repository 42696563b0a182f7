package clusterservicestatus_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
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

package clusterservicestatus_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestDriftIsCorrected: in ContinuousWithDriftDetection mode a managed object deleted or edited
// by someone else on the cluster is put back at once, without waiting for a full reconcile;
// a field Holdfast does not own, added by someone else, is left alone.
func TestDriftIsCorrected(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
		Inline: configMaps(ns, "a", "b") + "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: " + ns + "\nstringData:\n  password: declared-secret-value\n"})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	c1 := targets["cluster-1"]
	ctx := context.Background()

	t.Log("Deleted: recreated")
	began := time.Now()
	deleteOutOfBand(t, "cluster-1", ns, "a")
	eventually(t, func(g Gomega) { getConfigMap(g, "cluster-1", ns, "a") })
	t.Logf("Recreated %s after the deletion", time.Since(began).Round(time.Millisecond))

	t.Log("Edited by another field manager: restored; that manager's own key stays")
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "b")
		cm.Data["cluster"] = "edited-by-hand"
		cm.Data["extra"] = "theirs"
		g.Expect(c1.Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "b")
		g.Expect(cm.Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		g.Expect(cm.Data).To(HaveKeyWithValue("extra", "theirs"))
	})

	t.Log("Each drift is recorded with the changed fields, the author and the correction")
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Drifts).To(ContainElement(And(
			HaveField("Name", "a"), HaveField("Type", holdfastv1.DriftDeleted), HaveField("CorrectedTime", Not(BeNil())))))
		g.Expect(css.Status.Drifts).To(ContainElement(And(
			HaveField("Name", "b"), HaveField("Type", holdfastv1.DriftChanged),
			HaveField("Manager", "kubectl-edit"), HaveField("Operation", "Update"),
			HaveField("Fields", ContainElement(holdfastv1.FieldChange{Path: ".data.cluster", Old: `"cluster-1"`, New: `"edited-by-hand"`})),
			HaveField("CorrectedTime", Not(BeNil())))))
		g.Expect(css.Status.DriftCount).To(BeNumerically(">=", 2))
	})

	t.Log("A Secret's changed value is restored and never shown")
	eventually(t, func(g Gomega) {
		sec := &corev1.Secret{}
		g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "creds"}, sec)).To(Succeed())
		sec.Data["password"] = []byte("hand-typed-secret-value")
		g.Expect(c1.Update(ctx, sec, client.FieldOwner("kubectl-edit"))).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		sec := &corev1.Secret{}
		g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "creds"}, sec)).To(Succeed())
		g.Expect(string(sec.Data["password"])).To(Equal("declared-secret-value"))
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "creds"),
			HaveField("Fields", ContainElement(HaveField("Path", ".data.password"))))))
		text := fmt.Sprintf("%+v", css.Status)
		g.Expect(text).NotTo(ContainSubstring("hand-typed-secret-value"))
		g.Expect(text).NotTo(ContainSubstring("declared-secret-value"))
		g.Expect(text).NotTo(ContainSubstring(base64.StdEncoding.EncodeToString([]byte("hand-typed-secret-value"))))
	})
	g := NewWithT(t)
	g.Expect(logs.String()).NotTo(ContainSubstring("hand-typed-secret-value"))
	g.Expect(logs.String()).NotTo(ContainSubstring(base64.StdEncoding.EncodeToString([]byte("hand-typed-secret-value"))))

	t.Log("A label someone else adds is not drift: nothing is rewritten")
	cm := &corev1.ConfigMap{}
	NewWithT(t).Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b"}, cm)).To(Succeed())
	cm.Labels["team"] = "theirs"
	NewWithT(t).Expect(c1.Update(ctx, cm, client.FieldOwner("kubectl-label"))).To(Succeed())
	rv := cm.ResourceVersion
	consistently(t, 2*time.Second, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").ResourceVersion).To(Equal(rv))
	})

	t.Log("An object its owner on the cluster exempted (holdfast.dev/drift-ignore) is left as they made it")
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "a")
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[holdfastv1.DriftIgnoreAnnotation] = "true"
		cm.Data["cluster"] = "local-change"
		g.Expect(c1.Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())
	})
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		m.Annotations = map[string]string{holdfastv1.ReconcileRequestedAtAnnotation: "with-an-ignored-object"}
	})
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.LastHandledReconcileAt).To(Equal("with-an-ignored-object"))
		g.Expect(css.Status.Resources).To(ContainElement(And(HaveField("Name", "a"), HaveField("State", holdfastv1.ResourceIgnored))))
	})
	consistently(t, 2*time.Second, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "local-change"))
	})
}

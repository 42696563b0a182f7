package clusterservicestatus_test

import (
	"context"
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
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "a", "b"), Templating: holdfastv1.TemplatingGoTemplate})
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

	t.Log("A label someone else adds is not drift: nothing is rewritten")
	cm := &corev1.ConfigMap{}
	NewWithT(t).Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b"}, cm)).To(Succeed())
	cm.Labels["team"] = "theirs"
	NewWithT(t).Expect(c1.Update(ctx, cm, client.FieldOwner("kubectl-label"))).To(Succeed())
	rv := cm.ResourceVersion
	consistently(t, 2*time.Second, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").ResourceVersion).To(Equal(rv))
	})
}

package clusterservicestatus_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
)

// TestOverridesApplyWhereTheySelect: a service set over both clusters with one override for
// env=prod (values and a patch): cluster-2 gets it and its status names it, cluster-1 gets the
// plain service. An override whose patch targets nothing fails the service on the clusters it
// selects only, with a reason naming it, while the others stay Ready; mended, it applies (issue
// 31, behaviours 3 and 4).
func TestOverridesApplyWhereTheySelect(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	ctx := context.Background()
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
		Values: "mode: standard\n",
		Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + ns + "}\ndata: {mode: '{{ .Values.mode }}', cluster: '{{ .Cluster.Name }}'}\n"})
	prod := metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	svc := service("web", name, ns)
	svc.Overrides = []holdfastv1.ServiceOverride{{Name: "prod-strict", ClusterSelector: prod, Values: "mode: strict\n",
		Patches: []holdfastv1.OverridePatch{{Patch: "- {op: add, path: /data/audit, value: 'on'}\n", Target: &holdfastv1.PatchTarget{Kind: "ConfigMap", Name: "settings"}}}}}
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv(""),
		SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection, Services: []holdfastv1.Service{svc}})

	eventually(t, func(g Gomega) {
		dev, prodCM := getConfigMap(g, "cluster-1", ns, "settings"), getConfigMap(g, "cluster-2", ns, "settings")
		g.Expect(dev.Data).To(Equal(map[string]string{"mode": "standard", "cluster": "cluster-1"}))
		g.Expect(prodCM.Data).To(Equal(map[string]string{"mode": "strict", "cluster": "cluster-2", "audit": "on"}))
	})
	g := NewWithT(t)
	g.Expect(serviceOf(expectReady(t, name, "cluster-2"), "web").Overrides).To(Equal([]string{"prod-strict"}))
	g.Expect(serviceOf(expectReady(t, name, "cluster-1"), "web").Overrides).To(BeEmpty())

	// change changes the service set's spec, retried on conflicts (its status is being written).
	change := func(f func(*holdfastv1.MultiClusterServiceSpec)) {
		t.Helper()
		eventually(t, func(g Gomega) {
			mcs := &holdfastv1.MultiClusterService{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: name}, mcs)).To(Succeed())
			f(&mcs.Spec)
			g.Expect(hub.Update(ctx, mcs)).To(Succeed())
		})
	}

	t.Log("A second override whose patch targets nothing: only the clusters it selects fail")
	change(func(spec *holdfastv1.MultiClusterServiceSpec) {
		spec.Services[0].Overrides = append(spec.Services[0].Overrides[:1], holdfastv1.ServiceOverride{Name: "broken", ClusterSelector: prod,
			Patches: []holdfastv1.OverridePatch{{Patch: "- {op: add, path: /data/x, value: 'on'}\n", Target: &holdfastv1.PatchTarget{Kind: "Secret"}}}})
	})
	eventually(t, func(g Gomega) {
		st := serviceOf(statusOf(g, name, "cluster-2"), "web")
		g.Expect(st.Reason).To(Equal(render.ReasonOverrideFailed))
		g.Expect(st.Message).To(And(ContainSubstring(`override "broken"`), ContainSubstring("selects none")))
		g.Expect(st.Overrides).To(Equal([]string{"prod-strict", "broken"}))
	})
	g.Expect(getConfigMap(g, "cluster-2", ns, "settings").Data).To(HaveKeyWithValue("audit", "on"), "what was deployed stays")
	dev := statusOf(g, name, "cluster-1")
	g.Expect(serviceOf(dev, "web").Ready).To(BeEquivalentTo("True"), "the cluster the broken override does not select")

	t.Log("Mended, it applies")
	change(func(spec *holdfastv1.MultiClusterServiceSpec) {
		spec.Services[0].Overrides[1].Patches[0].Target.Kind = "ConfigMap"
	})
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-2", ns, "settings").Data).To(HaveKeyWithValue("x", "on"))
		g.Expect(serviceOf(statusOf(g, name, "cluster-2"), "web").Ready).To(BeEquivalentTo("True"))
	})
	g.Expect(getConfigMap(g, "cluster-1", ns, "settings").Data).NotTo(HaveKey("x"))
}

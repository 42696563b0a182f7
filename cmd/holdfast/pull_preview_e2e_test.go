package main

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// TestPreviewAcrossPushAndPullClusters: a service set with approval Manual over a Push and a Pull
// cluster (with an override for the Pull cluster only). A template change is previewed on both —
// the Pull cluster's by its agent, from the revision the hub published for it, rendered with its
// override — and held: both previews record the change, neither cluster changes. Approved, the
// revision reaches both (issue 31, behaviour 1 in pull mode).
func TestPreviewAcrossPushAndPullClusters(t *testing.T) {
	f := startPullFleet(t)
	ctx, g, hub := t.Context(), NewWithT(t), f.hub
	targets := f.addPushCluster(t, map[string]string{"mode": "push"})
	configMap := func(cluster string) map[string]string {
		cm := &corev1.ConfigMap{}
		if err := targets[cluster].Get(ctx, client.ObjectKey{Namespace: cluster, Name: "app"}, cm); err != nil {
			return nil
		}
		return cm.Data
	}
	manifests := func(rev string) string {
		return "apiVersion: v1\nkind: Namespace\nmetadata: {name: '{{ .Cluster.Name }}'}\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: '{{ .Cluster.Name }}'}\ndata: {rev: '" + rev + "'}\n"
	}
	tplKey := client.ObjectKey{Namespace: "holdfast-system", Name: "app"}
	g.Expect(hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: tplKey.Namespace, Name: tplKey.Name},
		Spec: holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: manifests("1")}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "mode", Operator: metav1.LabelSelectorOpIn, Values: []string{"pull", "push"}}}}},
			SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
			Services: []holdfastv1.Service{{Name: "app", Template: holdfastv1.TemplateReference{Namespace: tplKey.Namespace, Name: tplKey.Name},
				Overrides: []holdfastv1.ServiceOverride{{Name: "pull-only",
					ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"mode": "pull"}},
					Patches:         []holdfastv1.OverridePatch{{Patch: "- {op: add, path: /data/via, value: agent}\n", Target: &holdfastv1.PatchTarget{Kind: "ConfigMap", Name: "app"}}}}}}},
			Rollout: &holdfastv1.RolloutStrategy{Approval: holdfastv1.ApprovalManual},
		}})).To(Succeed())
	rollout := func(g Gomega) *holdfastv1.RolloutStatus { return f.rollout(ctx, g, "app") }
	g.Eventually(func(g Gomega) {
		g.Expect(configMap("edge")).To(Equal(map[string]string{"rev": "1", "via": "agent"}))
		g.Expect(configMap("near")).To(Equal(map[string]string{"rev": "1"}))
		g.Expect(rollout(g).Phase).To(Equal(holdfastv1.RolloutComplete))
	}).WithTimeout(90 * time.Second).Should(Succeed())

	t.Log("Revision 2 is previewed on both, the Pull cluster's by its agent, and held")
	g.Eventually(func(g Gomega) {
		tpl := &holdfastv1.ServiceTemplate{}
		g.Expect(hub.Get(ctx, tplKey, tpl)).To(Succeed())
		tpl.Spec.Inline = manifests("2")
		g.Expect(hub.Update(ctx, tpl)).To(Succeed())
	}).WithTimeout(30 * time.Second).Should(Succeed())
	var held string
	g.Eventually(func(g Gomega) {
		ro := rollout(g)
		g.Expect(ro.Phase).To(Equal(holdfastv1.RolloutPreviewed))
		g.Expect(ro.Preview.Revision).To(Equal(ro.Revision))
		g.Expect(ro.Preview.Previewed).To(BeEquivalentTo(2))
		g.Expect(ro.Preview.Changed).To(BeEquivalentTo(2), "%+v", ro.Preview)
		held = ro.Revision
	}).WithTimeout(90 * time.Second).Should(Succeed())
	edge := &holdfastv1.ClusterServiceStatus{}
	g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: naming.StatusName("app", "edge")}, edge)).To(Succeed())
	g.Expect(edge.Status.Preview).NotTo(BeNil())
	g.Expect(edge.Status.Preview.Outcome).To(Equal(holdfastv1.PreviewChanges))
	g.Expect(edge.Status.Preview.Changes).To(HaveLen(1))
	g.Expect(edge.Status.Preview.Changes[0].Object).To(Equal("v1 ConfigMap edge/app"))
	g.Expect(strings.Join(edge.Status.Preview.Changes[0].Diff, "\n")).To(Equal(`/data/rev: "1" -> "2"`),
		"the override applies to the previewed revision too: via stays")
	g.Consistently(func() []map[string]string { return []map[string]string{configMap("edge"), configMap("near")} }).WithTimeout(2*time.Second).
		Should(Equal([]map[string]string{{"rev": "1", "via": "agent"}, {"rev": "1"}}), "nothing changes before the approval")

	t.Log("Approved, revision 2 reaches both")
	f.updateServiceSet(t, "app", func(m *holdfastv1.MultiClusterService) {
		metav1.SetMetaDataAnnotation(&m.ObjectMeta, holdfastv1.RolloutApproveAnnotation, holdfastv1.ApproveValue(held, time.Now()))
	})
	g.Eventually(func(g Gomega) {
		g.Expect(configMap("edge")).To(Equal(map[string]string{"rev": "2", "via": "agent"}))
		g.Expect(configMap("near")).To(Equal(map[string]string{"rev": "2"}))
		g.Expect(rollout(g).Phase).To(Equal(holdfastv1.RolloutComplete))
	}).WithTimeout(90 * time.Second).Should(Succeed())
}

// TestSelectorChangeOnAPullCluster: a changed cluster selector waits for approval on a Pull
// cluster too. A set on the Push cluster widened to the Pull cluster holds it (the hub publishes
// it no services) while its agent previews what it would gain; approved, the agent deploys it.
// Narrowed again, the agent previews the withdrawal while the cluster keeps its service;
// approved, the agent withdraws it.
func TestSelectorChangeOnAPullCluster(t *testing.T) {
	f := startPullFleet(t)
	ctx, g, hub := t.Context(), NewWithT(t), f.hub
	targets := f.addPushCluster(t, map[string]string{"mode": "push"})
	configMap := func(cluster string) map[string]string {
		cm := &corev1.ConfigMap{}
		if err := targets[cluster].Get(ctx, client.ObjectKey{Namespace: "apps", Name: "app"}, cm); err != nil {
			return nil
		}
		return cm.Data
	}
	modes := func(values ...string) holdfastv1.ClusterSelector {
		return holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "mode", Operator: metav1.LabelSelectorOpIn, Values: values}}}}
	}
	tplKey := client.ObjectKey{Namespace: "holdfast-system", Name: "app"}
	g.Expect(hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: tplKey.Namespace, Name: tplKey.Name},
		Spec: holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
			Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {rev: '1'}\n"}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: holdfastv1.MultiClusterServiceSpec{ClusterSelector: modes("push"),
			Services: []holdfastv1.Service{{Name: "app", Namespace: "apps",
				Template: holdfastv1.TemplateReference{Namespace: tplKey.Namespace, Name: tplKey.Name}}},
			Rollout: &holdfastv1.RolloutStrategy{Approval: holdfastv1.ApprovalManual},
		}})).To(Succeed())
	rollout := func(g Gomega) *holdfastv1.RolloutStatus { return f.rollout(ctx, g, "app") }
	g.Eventually(func(g Gomega) {
		g.Expect(configMap("near")).To(Equal(map[string]string{"rev": "1"}))
		g.Expect(rollout(g).Phase).To(Equal(holdfastv1.RolloutComplete))
	}).WithTimeout(90 * time.Second).Should(Succeed())
	edgePreview := func(g Gomega, revision string) *holdfastv1.ClusterPreview {
		css := &holdfastv1.ClusterServiceStatus{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: naming.StatusName("app", "edge")}, css)).To(Succeed())
		g.Expect(css.Status.Preview).NotTo(BeNil())
		g.Expect(css.Status.Preview.Revision).To(Equal(revision))
		return css.Status.Preview
	}
	reselect := func(sel holdfastv1.ClusterSelector) string {
		f.updateServiceSet(t, "app", func(m *holdfastv1.MultiClusterService) { m.Spec.ClusterSelector = sel })
		var held string
		g.Eventually(func(g Gomega) {
			ro := rollout(g)
			g.Expect(ro.Phase).To(Equal(holdfastv1.RolloutPreviewed))
			g.Expect(ro.Preview.Previewed).To(BeEquivalentTo(2))
			held = ro.Revision
		}).WithTimeout(90 * time.Second).Should(Succeed())
		return held
	}
	approve := func(revision string) {
		f.updateServiceSet(t, "app", func(m *holdfastv1.MultiClusterService) {
			metav1.SetMetaDataAnnotation(&m.ObjectMeta, holdfastv1.RolloutApproveAnnotation, holdfastv1.ApproveValue(revision, time.Now()))
		})
	}

	t.Log("Widened to the Pull cluster: held there, its agent previews what it gains")
	widened := reselect(modes("pull", "push"))
	p := edgePreview(g, widened)
	g.Expect(p.Outcome).To(Equal(holdfastv1.PreviewChanges), "%+v", p)
	g.Expect(p.Changes).To(ConsistOf(And(HaveField("Object", "v1 ConfigMap apps/app"), HaveField("Action", holdfastv1.PreviewCreate))))
	g.Consistently(func() map[string]string { return configMap("edge") }).WithTimeout(2*time.Second).Should(BeNil(), "nothing reaches edge before approval")
	approve(widened)
	g.Eventually(func(g Gomega) {
		g.Expect(configMap("edge")).To(Equal(map[string]string{"rev": "1"}))
		g.Expect(rollout(g).Phase).To(Equal(holdfastv1.RolloutComplete))
	}).WithTimeout(90 * time.Second).Should(Succeed())

	t.Log("Narrowed again: the agent previews the withdrawal, and withdraws once approved")
	narrowed := reselect(modes("push"))
	p = edgePreview(g, narrowed)
	g.Expect(p.Changes).To(ConsistOf(And(HaveField("Object", "v1 ConfigMap apps/app"), HaveField("Action", holdfastv1.PreviewDelete))), "%+v", p)
	g.Consistently(func() map[string]string { return configMap("edge") }).WithTimeout(2*time.Second).Should(Equal(map[string]string{"rev": "1"}), "edge keeps its service")
	approve(narrowed)
	g.Eventually(func(g Gomega) {
		g.Expect(configMap("edge")).To(BeNil())
		g.Expect(configMap("near")).To(Equal(map[string]string{"rev": "1"}))
	}).WithTimeout(90 * time.Second).Should(Succeed())
}

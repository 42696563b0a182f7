package clusterservicestatus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/charts"
	"holdfast.dev/holdfast/internal/controller/serviceset"
)

// installApprovalPolicy applies the chart's hub admission policy that stamps approvers
// (charts/holdfast/files/hub/approval-policy.yaml) to the suite's hub, as the chart does, and
// waits until the API server enforces it.
func installApprovalPolicy(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	data, err := charts.Holdfast.ReadFile(charts.HoldfastDir + "/files/hub/approval-policy.yaml")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for _, doc := range strings.Split(string(data), "\n---\n") {
		obj := &unstructured.Unstructured{}
		NewWithT(t).Expect(yaml.Unmarshal([]byte(doc), &obj.Object)).To(Succeed())
		NewWithT(t).Expect(hub.Create(ctx, obj)).To(Succeed())
		t.Cleanup(func() { _ = hub.Delete(ctx, obj) })
	}
	// Enforced once a write of the approval annotation, dry-run, comes back stamped.
	probe := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "approval-probe",
		Annotations: map[string]string{holdfastv1.RolloutApproveAnnotation: "r x", holdfastv1.RolloutApprovedByAnnotation: "nobody"}}}
	eventually(t, func(g Gomega) {
		p := probe.DeepCopy()
		g.Expect(hub.Create(ctx, p, client.DryRunAll)).To(Succeed())
		g.Expect(p.Annotations[holdfastv1.RolloutApprovedByAnnotation]).NotTo(Equal("nobody"))
	})
	NewWithT(t).Expect(hub.Get(ctx, client.ObjectKey{Name: holdfastv1.ApprovalPolicyName}, &admissionv1.MutatingAdmissionPolicy{})).To(Succeed())
}

// hubAs is a hub client acting as user, in groups.
func hubAs(t *testing.T, user string, groups ...string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(fl.Hub.RESTConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	c, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return c
}

// TestPreviewAndApproval: a service set with spec.rollout.approval Manual over both clusters,
// whose values differ by cluster (env). Its first revision goes out at once. A template change
// is previewed on both clusters and held (Previewed): two groups, each with the field its
// cluster would see change, and neither cluster touched. A later change one cluster's
// admission refuses is previewed as refused there only, with the API server's reason, and
// changes the other. Approved by alice (who writes someone else's name as approver: the hub's
// policy stamps hers), the rollout records her and goes on: the cluster that accepts it gets
// it, the one that refuses fails and halts the rollout (issue 31, behaviours 1, 2, 4).
func TestPreviewAndApproval(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	ctx := context.Background()
	installApprovalPolicy(t)
	manifest := func(data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + ns + "}\ndata: {" + data + "}\n"
	}
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: manifest("rev: '1'")})
	svc := service("web", name, ns)
	svc.Values = "env: '{{ index .Cluster.Labels \"env\" }}'\n"
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv(""),
		SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection, Services: []holdfastv1.Service{svc},
		Rollout: &holdfastv1.RolloutStrategy{Approval: holdfastv1.ApprovalManual}})
	eventually(t, func(g Gomega) {
		for _, c := range []string{"cluster-1", "cluster-2"} {
			g.Expect(getConfigMap(g, c, ns, "settings").Data).To(Equal(map[string]string{"rev": "1"}), "the first revision goes out at once")
		}
		g.Expect(rolloutOf(g, name).Status.Rollout.Phase).To(Equal(holdfastv1.RolloutComplete))
	})
	dev, prod := statusOf(NewWithT(t), name, "cluster-1"), statusOf(NewWithT(t), name, "cluster-2")
	devEnv, prodEnv := fleetEnv(t, "cluster-1"), fleetEnv(t, "cluster-2")

	t.Log("Revision 2, with a per-cluster value and a new Secret: previewed on both, held, nothing changes")
	secret := "---\napiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: " + ns + "}\nstringData: {password: 's3cr3t-{{ .Values.env }}'}\n"
	updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) {
		tpl.Spec.Inline = manifest("rev: '2', greeting: 'hello {{ .Values.env }}'") + secret
	})
	var r2 string
	eventually(t, func(g Gomega) {
		ro := rolloutOf(g, name).Status.Rollout
		g.Expect(ro.Phase).To(Equal(holdfastv1.RolloutPreviewed))
		g.Expect(ro.Preview).NotTo(BeNil())
		g.Expect(ro.Preview.Revision).To(Equal(ro.Revision))
		g.Expect(ro.Preview.Previewed).To(BeEquivalentTo(2))
		g.Expect(ro.Preview.Changed).To(BeEquivalentTo(2))
		g.Expect(ro.Preview.Groups).To(HaveLen(2), "one group per distinct diff")
		var lines []string
		for _, grp := range ro.Preview.Groups {
			g.Expect(grp.Clusters).To(BeEquivalentTo(1))
			g.Expect(grp.Changes).To(ConsistOf(
				And(HaveField("Object", "v1 ConfigMap "+ns+"/settings"), HaveField("Action", holdfastv1.PreviewUpdate)),
				And(HaveField("Object", "v1 Secret "+ns+"/creds"), HaveField("Action", holdfastv1.PreviewCreate))))
			for _, ch := range grp.Changes {
				lines = append(lines, strings.Join(ch.Diff, "\n"))
			}
		}
		all := strings.Join(lines, "\n")
		g.Expect(all).To(ContainSubstring(`/data/rev: "1" -> "2"`))
		g.Expect(all).To(ContainSubstring(fmt.Sprintf(`/data/greeting: <none> -> "hello %s"`, devEnv)))
		g.Expect(all).To(ContainSubstring(fmt.Sprintf(`/data/greeting: <none> -> "hello %s"`, prodEnv)))
		r2 = ro.Revision
	})
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-2")
		g.Expect(css.Spec.Revision).To(Equal(prod.Spec.Revision), "the cluster keeps its revision")
		g.Expect(css.Status.Preview).NotTo(BeNil())
		g.Expect(css.Status.Preview.Revision).To(Equal(r2))
		g.Expect(css.Status.Preview.Outcome).To(Equal(holdfastv1.PreviewChanges))
	})
	consistently(t, 2*time.Second, func(g Gomega) {
		for _, c := range []string{"cluster-1", "cluster-2"} {
			g.Expect(getConfigMap(g, c, ns, "settings").Data).To(Equal(map[string]string{"rev": "1"}), "nothing changes before approval on %s", c)
			g.Expect(apiNotFound(targets[c].Get(ctx, client.ObjectKey{Namespace: ns, Name: "creds"}, &corev1.Secret{}))).To(BeTrue(), "the Secret is not created on %s", c)
		}
	})
	t.Log("The Secret's value is nowhere in the previews")
	for _, obj := range []client.Object{statusOf(NewWithT(t), name, "cluster-1"), statusOf(NewWithT(t), name, "cluster-2"), rolloutOf(NewWithT(t), name)} {
		raw, err := json.Marshal(obj)
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		NewWithT(t).Expect(string(raw)).NotTo(ContainSubstring("s3cr3t"), "%T %s", obj, obj.GetName())
		NewWithT(t).Expect(string(raw)).To(ContainSubstring("creds"), "%T %s shows the Secret", obj, obj.GetName())
	}
	g := NewWithT(t)
	g.Expect(statusOf(g, name, "cluster-1").Spec.Revision).To(Equal(dev.Spec.Revision))

	t.Log("Revision 3, which cluster-2's admission refuses: refused there only")
	freezePolicy(t, "cluster-2", ns, "settings", "cluster-2-v3")
	updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) {
		tpl.Spec.Inline = manifest("rev: '3', cluster: '{{ .Cluster.Name }}-v3'")
	})
	var r3 string
	eventually(t, func(g Gomega) {
		ro := rolloutOf(g, name).Status.Rollout
		g.Expect(ro.Revision).NotTo(Equal(r2))
		g.Expect(ro.Phase).To(Equal(holdfastv1.RolloutPreviewed))
		g.Expect(ro.Preview.Revision).To(Equal(ro.Revision))
		g.Expect(ro.Preview.Refused).To(BeEquivalentTo(1))
		g.Expect(ro.Preview.Changed).To(BeEquivalentTo(1))
		var refused *holdfastv1.PreviewGroup
		for i := range ro.Preview.Groups {
			if ro.Preview.Groups[i].Outcome == holdfastv1.PreviewRefused {
				refused = &ro.Preview.Groups[i]
			}
		}
		g.Expect(refused).NotTo(BeNil())
		g.Expect(refused.Examples).To(Equal([]string{clusterNamespace + "/cluster-2"}))
		g.Expect(refused.Message).To(ContainSubstring("frozen by the platform team"))
		r3 = ro.Revision
	})
	g.Expect(statusOf(g, name, "cluster-1").Status.Preview.Outcome).To(Equal(holdfastv1.PreviewChanges))
	g.Expect(getConfigMap(g, "cluster-1", ns, "settings").Data).To(Equal(map[string]string{"rev": "1"}))

	t.Log("An approval of revision 2 approves nothing now")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		metav1.SetMetaDataAnnotation(&m.ObjectMeta, holdfastv1.RolloutApproveAnnotation, r2+" t1")
	})
	eventually(t, func(g Gomega) {
		ro := rolloutOf(g, name).Status.Rollout
		g.Expect(ro.LastHandledApprove).To(Equal(r2 + " t1"))
		g.Expect(ro.Phase).To(Equal(holdfastv1.RolloutPreviewed))
		g.Expect(ro.Approval).To(BeNil())
	})

	t.Log("alice approves revision 3, naming mallory: the hub records alice")
	alice := hubAs(t, "alice", "system:masters")
	eventually(t, func(g Gomega) {
		m := &holdfastv1.MultiClusterService{}
		g.Expect(alice.Get(ctx, client.ObjectKey{Name: name}, m)).To(Succeed())
		metav1.SetMetaDataAnnotation(&m.ObjectMeta, holdfastv1.RolloutApproveAnnotation, r3+" t2")
		metav1.SetMetaDataAnnotation(&m.ObjectMeta, holdfastv1.RolloutApprovedByAnnotation, "mallory")
		g.Expect(alice.Update(ctx, m)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		ro := rolloutOf(g, name).Status.Rollout
		g.Expect(ro.Approval).NotTo(BeNil())
		g.Expect(ro.Approval.Revision).To(Equal(r3))
		g.Expect(ro.Approval.By).To(Equal("alice"))
		g.Expect(ro.Approval.Verified).To(BeTrue())
		g.Expect(ro.Approval.PreviewDigest).To(Equal(ro.Preview.Digest))
		g.Expect(getConfigMap(g, "cluster-1", ns, "settings").Data).To(Equal(map[string]string{"rev": "3", "cluster": "cluster-1-v3"}))
		g.Expect(ro.Phase).To(Equal(holdfastv1.RolloutHalted), "cluster-2 refuses it")
		g.Expect(ro.FailedClusters).To(ContainElement(HaveField("Cluster", clusterNamespace+"/cluster-2")))
	})
	g.Expect(getConfigMap(g, "cluster-2", ns, "settings").Data).To(Equal(map[string]string{"rev": "1"}))
}

// fleetEnv is the env label of the suite's Cluster name.
func fleetEnv(t *testing.T, name string) string {
	t.Helper()
	c := &holdfastv1.Cluster{}
	NewWithT(t).Expect(hub.Get(context.Background(), clusterKey(name), c)).To(Succeed())
	return c.Labels["env"]
}

// TestTenantApprovesItsServiceSet: a tenant's ServiceSet with approval Manual holds a template
// change; the tenant, who may write only ServiceSets of their namespace, approves it on the
// ServiceSet (naming someone else as approver): Holdfast carries the approval to the
// MultiClusterService it runs as, which the tenant may not write, and records the tenant as the
// approver, verified; the revision then deploys.
func TestTenantApprovesItsServiceSet(t *testing.T) {
	ctx := context.Background()
	team, ns := objName(t, "team"), objName(t, "ns")
	NewWithT(t).Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}})).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}) })
	installApprovalPolicy(t)
	tenantCluster(t, team, "edge", "cluster-1", map[string]string{"fleet": "sandbox"})
	manifest := func(rev string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + ns + "}\ndata: {rev: '" + rev + "'}\n"
	}
	tpl := &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "apps"}, Spec: holdfastv1.ServiceTemplateSpec{Inline: manifest("1")}}
	NewWithT(t).Expect(hub.Create(ctx, tpl)).To(Succeed())
	ss := &holdfastv1.ServiceSet{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "apps"},
		Spec: holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv(""), Rollout: &holdfastv1.RolloutStrategy{Approval: holdfastv1.ApprovalManual},
			Services: []holdfastv1.Service{{Name: "web", Template: holdfastv1.TemplateReference{Namespace: team, Name: "apps"}, Namespace: ns}}}}
	NewWithT(t).Expect(hub.Create(ctx, ss)).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(ctx, ss) })
	rollout := func(g Gomega) *holdfastv1.RolloutStatus {
		got := &holdfastv1.ServiceSet{}
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(ss), got)).To(Succeed())
		g.Expect(got.Status.Rollout).NotTo(BeNil())
		return got.Status.Rollout
	}
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "settings").Data).To(HaveKeyWithValue("rev", "1"))
		g.Expect(rollout(g).Phase).To(Equal(holdfastv1.RolloutComplete))
	})

	t.Log("A template change is held, previewed")
	eventually(t, func(g Gomega) {
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(tpl), tpl)).To(Succeed())
		tpl.Spec.Inline = manifest("2")
		g.Expect(hub.Update(ctx, tpl)).To(Succeed())
	})
	var held string
	eventually(t, func(g Gomega) {
		ro := rollout(g)
		g.Expect(ro.Phase).To(Equal(holdfastv1.RolloutPreviewed))
		g.Expect(ro.Preview.Changed).To(BeEquivalentTo(1))
		held = ro.Revision
	})

	t.Log("tina, who may write only her namespace's ServiceSets, approves it there")
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "servicesets"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{holdfastv1.GroupVersion.Group}, Resources: []string{"servicesets"}, Verbs: []string{"get", "update", "patch"}}}}
	NewWithT(t).Expect(hub.Create(ctx, role)).To(Succeed())
	NewWithT(t).Expect(hub.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "tina"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "tina"}}})).To(Succeed())
	tina := hubAs(t, "tina")
	mcs := &holdfastv1.MultiClusterService{}
	NewWithT(t).Expect(apierrors.IsForbidden(tina.Get(ctx, client.ObjectKey{Name: serviceset.MultiClusterServiceName(team, "apps")}, mcs))).To(BeTrue(),
		"the tenant cannot read the MultiClusterService it runs as")
	eventually(t, func(g Gomega) {
		got := &holdfastv1.ServiceSet{}
		g.Expect(tina.Get(ctx, client.ObjectKeyFromObject(ss), got)).To(Succeed())
		metav1.SetMetaDataAnnotation(&got.ObjectMeta, holdfastv1.RolloutApproveAnnotation, holdfastv1.ApproveValue(held, time.Now()))
		metav1.SetMetaDataAnnotation(&got.ObjectMeta, holdfastv1.RolloutApprovedByAnnotation, "the-boss")
		g.Expect(tina.Update(ctx, got)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		ro := rollout(g)
		g.Expect(ro.Approval).NotTo(BeNil())
		g.Expect(ro.Approval.By).To(Equal("tina"))
		g.Expect(ro.Approval.Verified).To(BeTrue())
		g.Expect(getConfigMap(g, "cluster-1", ns, "settings").Data).To(HaveKeyWithValue("rev", "2"))
	})
}

// TestSelectorChangeAwaitsApproval: with approval Manual, a changed cluster selector is a
// revision like any other. A set deployed to cluster-1 is moved to cluster-2 by its selector:
// the preview shows what cluster-2 would gain and what cluster-1 would lose, and nothing moves
// (cluster-2 is held, deploying nothing; cluster-1 keeps its service). Approved, cluster-2 gets
// the service and cluster-1's is withdrawn (issue 31: "what clusters newly matched or unmatched
// would gain or lose").
func TestSelectorChangeAwaitsApproval(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{
		Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + ns + "}\ndata: {rev: '1'}\n"})
	devEnv, prodEnv := fleetEnv(t, "cluster-1"), fleetEnv(t, "cluster-2")
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv(devEnv),
		Services: []holdfastv1.Service{service("web", name, ns)}, Rollout: &holdfastv1.RolloutStrategy{Approval: holdfastv1.ApprovalManual}})
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "settings").Data).To(HaveKeyWithValue("rev", "1"))
		g.Expect(rolloutOf(g, name).Status.Rollout.Phase).To(Equal(holdfastv1.RolloutComplete))
	})

	t.Log("The selector moves the set from cluster-1 to cluster-2: previewed, held")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) { m.Spec.ClusterSelector = selectEnv(prodEnv) })
	var r2 string
	eventually(t, func(g Gomega) {
		ro := rolloutOf(g, name).Status.Rollout
		g.Expect(ro.Phase).To(Equal(holdfastv1.RolloutPreviewed))
		g.Expect(ro.Preview.Clusters).To(BeEquivalentTo(2))
		g.Expect(ro.Preview.Groups).To(ConsistOf(
			And(HaveField("Examples", []string{clusterNamespace + "/cluster-1"}), HaveField("Selection", holdfastv1.PreviewLeaving),
				HaveField("Changes", ConsistOf(And(HaveField("Object", "v1 ConfigMap "+ns+"/settings"), HaveField("Action", holdfastv1.PreviewDelete))))),
			And(HaveField("Examples", []string{clusterNamespace + "/cluster-2"}), HaveField("Selection", holdfastv1.PreviewJoining),
				HaveField("Changes", ConsistOf(And(HaveField("Object", "v1 ConfigMap "+ns+"/settings"), HaveField("Action", holdfastv1.PreviewCreate)))))))
		g.Expect(ro.ClusterSelector.MatchLabels).To(HaveKeyWithValue("env", devEnv), "the old selector stays in force")
		r2 = ro.Revision
	})
	held := statusOf(NewWithT(t), name, "cluster-2")
	NewWithT(t).Expect(held.Spec.Held).To(BeTrue())
	NewWithT(t).Expect(condition(held.Status.Conditions, holdfastv1.RenderedCondition).Reason).To(Equal(holdfastv1.AwaitingApprovalReason))
	consistently(t, 2*time.Second, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "settings").Data).To(HaveKeyWithValue("rev", "1"), "cluster-1 keeps its service")
		g.Expect(apiNotFound(targets["cluster-2"].Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "settings"}, &corev1.ConfigMap{}))).
			To(BeTrue(), "nothing reaches cluster-2 before approval")
	})

	t.Log("Approved: cluster-2 gets the service, cluster-1's is withdrawn")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		metav1.SetMetaDataAnnotation(&m.ObjectMeta, holdfastv1.RolloutApproveAnnotation, holdfastv1.ApproveValue(r2, time.Now()))
	})
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-2", ns, "settings").Data).To(HaveKeyWithValue("rev", "1"))
		g.Expect(apiNotFound(targets["cluster-1"].Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "settings"}, &corev1.ConfigMap{}))).To(BeTrue())
		ro := rolloutOf(g, name).Status.Rollout
		g.Expect(ro.Phase).To(Equal(holdfastv1.RolloutComplete))
		g.Expect(ro.ClusterSelector.MatchLabels).To(HaveKeyWithValue("env", prodEnv))
	})
}

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
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/controller/serviceset"
	"holdfast.dev/holdfast/internal/naming"
)

// tenantCluster registers, in namespace ns, a Cluster named name with labels that reaches the
// target of the suite Cluster target (with a copy of its kubeconfig Secret): what anyone who may
// create a Cluster and a Secret in ns can do.
func tenantCluster(t *testing.T, ns, name, target string, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	g := NewWithT(t)
	src := &holdfastv1.Cluster{}
	g.Expect(hub.Get(ctx, clusterKey(target), src)).To(Succeed())
	kc := &corev1.Secret{}
	g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: clusterNamespace, Name: src.Spec.KubeconfigSecretRef.Name}, kc)).To(Succeed())
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-kubeconfig"}, Data: kc.Data}
	g.Expect(hub.Create(ctx, sec)).To(Succeed())
	c := &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: holdfastv1.ClusterSpec{KubeconfigSecretRef: holdfastv1.SecretKeyReference{Name: sec.Name, Key: src.Spec.KubeconfigSecretRef.Key}}}
	g.Expect(hub.Create(ctx, c)).To(Succeed())
	t.Cleanup(func() {
		_ = hub.Delete(ctx, c)
		_ = hub.Delete(ctx, sec)
		NewWithT(t).Eventually(func() bool { return apiNotFound(hub.Get(ctx, client.ObjectKeyFromObject(c), c)) }).
			WithTimeout(timeout).WithPolling(poll).Should(BeTrue(), "Cluster %s/%s still exists", ns, name)
	})
}

// configMapTemplate is a template, in namespace tplNS, declaring ConfigMap name in namespace ns.
func configMapTemplate(t *testing.T, tplNS, tplName, ns, name string) {
	t.Helper()
	tpl := &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: tplNS, Name: tplName},
		Spec: holdfastv1.ServiceTemplateSpec{Inline: fmt.Sprintf(
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {from: %s}\n", name, ns, tplNS)}}
	NewWithT(t).Expect(hub.Create(context.Background(), tpl)).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(context.Background(), tpl) })
}

// TestTenantBoundary: on a hub shared with tenants (--platform-namespaces), a user who can
// create objects only in namespace team can neither pull what a platform service set deploys
// onto a Cluster they register (by labelling it, or by creating a status object by hand), nor
// push what they declare onto a Cluster registered elsewhere (with a ServiceSet, or by editing a
// template a platform service set would use); their ServiceSets deploy to their own Clusters.
func TestTenantBoundary(t *testing.T) {
	ctx := context.Background()
	restartManagerWith(t, func(o *controller.Options) {
		o.PlatformNamespaces = []string{clusterNamespace, templateNamespace}
	})
	team, ns := objName(t, "team"), objName(t, "ns")
	NewWithT(t).Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}})).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}) })

	t.Log("A platform service set deploys to dev Clusters of the platform namespaces")
	platform := objName(t, "platform")
	configMapTemplate(t, templateNamespace, platform, ns, "platform-config")
	createServiceSet(t, platform, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
		Services: []holdfastv1.Service{service("web", platform, ns)}})
	expectReady(t, platform, "cluster-1")

	t.Log("Pull: a tenant registers a Cluster (target cluster-2) labelled to match it")
	tenantCluster(t, team, "rogue", "cluster-2", map[string]string{"fleet": "sandbox", "env": "dev"})
	rogueStatus := client.ObjectKey{Namespace: team, Name: naming.StatusName(platform, "rogue")}
	consistently(t, 5*time.Second, func(g Gomega) {
		g.Expect(apiNotFound(hub.Get(ctx, rogueStatus, &holdfastv1.ClusterServiceStatus{}))).To(BeTrue(), "the platform service set selected the tenant's Cluster")
		mcs := &holdfastv1.MultiClusterService{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Name: platform}, mcs)).To(Succeed())
		g.Expect(mcs.Status.MatchingClusters).To(BeEquivalentTo(1))
		expectNoConfigMap(g, "cluster-2", ns, "platform-config")
	})

	t.Log("Pull: a status object made by hand for the platform service set and the tenant's Cluster deploys nothing")
	forged := &holdfastv1.ClusterServiceStatus{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: rogueStatus.Name},
		Spec: holdfastv1.ClusterServiceStatusSpec{MultiClusterService: platform, Cluster: "rogue", CleanupPolicy: holdfastv1.DeletionOrphan}}
	NewWithT(t).Expect(hub.Create(ctx, forged)).To(Succeed())
	eventually(t, func(g Gomega) {
		css := &holdfastv1.ClusterServiceStatus{}
		g.Expect(hub.Get(ctx, rogueStatus, css)).To(Succeed())
		ready := condition(css.Status.Conditions, holdfastv1.TargetClusterReadyCondition)
		g.Expect(ready.Reason).To(Equal(holdfastv1.NotSelectedReason))
		g.Expect(ready.Message).To(ContainSubstring("does not select Cluster " + team + "/rogue"))
	})
	consistently(t, 3*time.Second, func(g Gomega) { expectNoConfigMap(g, "cluster-2", ns, "platform-config") })
	NewWithT(t).Expect(hub.Delete(ctx, forged)).To(Succeed())

	t.Log("A tenant's ServiceSet deploys its own template to its own Clusters only")
	configMapTemplate(t, team, "apps", ns, "tenant-config")
	apps := &holdfastv1.ServiceSet{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "apps"},
		Spec: holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv(""),
			Services: []holdfastv1.Service{{Name: "web", Template: holdfastv1.TemplateReference{Namespace: team, Name: "apps"}, Namespace: ns}}}}
	NewWithT(t).Expect(hub.Create(ctx, apps)).To(Succeed())
	appsMCS := serviceset.MultiClusterServiceName(team, "apps")
	eventually(t, func(g Gomega) {
		ss := &holdfastv1.ServiceSet{}
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(apps), ss)).To(Succeed())
		g.Expect(condition(ss.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue), "%+v", ss.Status.Conditions)
		g.Expect(ss.Status.MatchingClusters).To(BeEquivalentTo(1), "only the tenant's own Cluster")
		g.Expect(ss.Status.MultiClusterService).To(Equal(appsMCS))
		g.Expect(getConfigMap(g, "cluster-2", ns, "tenant-config").Data).To(HaveKeyWithValue("from", team))
	})
	consistently(t, 3*time.Second, func(g Gomega) {
		expectNoConfigMap(g, "cluster-1", ns, "tenant-config")
		g.Expect(apiNotFound(hub.Get(ctx, client.ObjectKey{Namespace: clusterNamespace, Name: naming.StatusName(appsMCS, "cluster-1")},
			&holdfastv1.ClusterServiceStatus{}))).To(BeTrue(), "the tenant's ServiceSet selected a platform Cluster")
	})

	t.Log("Push: a ServiceSet naming another namespace is refused as a whole")
	steal := &holdfastv1.ServiceSet{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "steal"},
		Spec: holdfastv1.MultiClusterServiceSpec{ClusterSelector: holdfastv1.ClusterSelector{Namespaces: []string{clusterNamespace}},
			Services: []holdfastv1.Service{service("web", platform, ns)}}}
	NewWithT(t).Expect(hub.Create(ctx, steal)).To(Succeed())
	eventually(t, func(g Gomega) {
		ss := &holdfastv1.ServiceSet{}
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(steal), ss)).To(Succeed())
		ready := condition(ss.Status.Conditions, holdfastv1.ReadyCondition)
		g.Expect(ready.Reason).To(Equal(holdfastv1.CrossNamespaceReferenceReason))
		g.Expect(ready.Message).To(And(ContainSubstring(`clusterSelector.namespaces names "`+clusterNamespace+`"`),
			ContainSubstring(`template namespace "`+templateNamespace+`"`)))
		g.Expect(condition(ss.Status.Conditions, holdfastv1.StalledCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(apiNotFound(hub.Get(ctx, client.ObjectKey{Name: serviceset.MultiClusterServiceName(team, "steal")}, &holdfastv1.MultiClusterService{}))).To(BeTrue())
	})
	NewWithT(t).Expect(hub.Delete(ctx, steal)).To(Succeed())

	t.Log("Push: a platform service set does not use a template of a tenant's namespace")
	viaTemplate := objName(t, "via-template")
	createServiceSet(t, viaTemplate, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
		Services: []holdfastv1.Service{{Name: "web", Template: holdfastv1.TemplateReference{Namespace: team, Name: "apps"}, Namespace: ns + "-x"}}})
	eventually(t, func(g Gomega) {
		css := statusOf(g, viaTemplate, "cluster-1")
		rendered := condition(css.Status.Conditions, holdfastv1.RenderedCondition)
		g.Expect(rendered.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(rendered.Message).To(ContainSubstring(`template namespace "` + team + `" is not a platform namespace`))
	})
	consistently(t, 2*time.Second, func(g Gomega) { expectNoConfigMap(g, "cluster-1", ns+"-x", "tenant-config") })

	t.Log("Deleting the ServiceSet withdraws what it deployed")
	NewWithT(t).Expect(hub.Delete(ctx, apps)).To(Succeed())
	eventually(t, func(g Gomega) {
		expectNoConfigMap(g, "cluster-2", ns, "tenant-config")
		g.Expect(apiNotFound(hub.Get(ctx, client.ObjectKeyFromObject(apps), &holdfastv1.ServiceSet{}))).To(BeTrue())
		g.Expect(apiNotFound(hub.Get(ctx, client.ObjectKey{Name: appsMCS}, &holdfastv1.MultiClusterService{}))).To(BeTrue())
	})
}

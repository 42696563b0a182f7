package clusterservicestatus_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/naming"
)

// TestDefaultFlagsKeepTenantsApart: with no --platform-namespaces the controller's own namespace
// (holdfast-system outside a cluster) is the only platform namespace, so a Cluster someone
// registers in another namespace and labels like a platform Cluster receives nothing from a
// platform service set, which serves the Clusters of the platform namespace all the same.
func TestDefaultFlagsKeepTenantsApart(t *testing.T) {
	ctx := context.Background()
	restartManagerWith(t, func(o *controller.Options) { o.PlatformNamespaces = nil })
	team, ns := objName(t, "team"), objName(t, "ns")
	NewWithT(t).Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}})).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}) })

	t.Log("A platform service set, its template in the controller's namespace, deploys to dev Clusters there")
	platform := objName(t, "platform")
	configMapTemplate(t, clusterNamespace, platform, ns, "platform-config")
	createServiceSet(t, platform, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
		Services: []holdfastv1.Service{{Name: "web", Template: holdfastv1.TemplateReference{Namespace: clusterNamespace, Name: platform}, Namespace: ns}}})
	expectReady(t, platform, "cluster-1")

	t.Log("Someone registers a Cluster (target cluster-2) in another namespace, labelled to match")
	tenantCluster(t, team, "rogue", "cluster-2", map[string]string{"fleet": "sandbox", "env": "dev"})
	consistently(t, 5*time.Second, func(g Gomega) {
		g.Expect(apiNotFound(hub.Get(ctx, client.ObjectKey{Namespace: team, Name: naming.StatusName(platform, "rogue")},
			&holdfastv1.ClusterServiceStatus{}))).To(BeTrue(), "the platform service set selected a Cluster outside the platform namespace")
		mcs := &holdfastv1.MultiClusterService{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Name: platform}, mcs)).To(Succeed())
		g.Expect(mcs.Status.MatchingClusters).To(BeEquivalentTo(1))
		expectNoConfigMap(g, "cluster-2", ns, "platform-config")
	})
}

// TestServiceSetServiceAccountOfItsOwnNamespace: without --tenant-service-account too, a
// ServiceSet naming a ServiceAccount of another namespace is refused as a whole, its Ready
// condition saying what to set.
func TestServiceSetServiceAccountOfItsOwnNamespace(t *testing.T) {
	ctx := context.Background()
	team := objName(t, "team")
	NewWithT(t).Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}})).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}) })
	configMapTemplate(t, team, "apps", objName(t, "ns"), "tenant-config")
	ss := &holdfastv1.ServiceSet{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "apps"},
		Spec: holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv(""),
			ServiceAccount: &holdfastv1.ServiceAccountReference{Namespace: "kube-system", Name: "generic-garbage-collector"},
			Services:       []holdfastv1.Service{{Name: "web", Template: holdfastv1.TemplateReference{Namespace: team, Name: "apps"}}}}}
	NewWithT(t).Expect(hub.Create(ctx, ss)).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(ctx, ss) })
	eventually(t, func(g Gomega) {
		got := &holdfastv1.ServiceSet{}
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(ss), got)).To(Succeed())
		ready := condition(got.Status.Conditions, holdfastv1.ReadyCondition)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(holdfastv1.CrossNamespaceReferenceReason))
		g.Expect(ready.Message).To(ContainSubstring(`serviceAccount names namespace "kube-system"`))
		g.Expect(ready.Message).To(ContainSubstring(`set serviceAccount.namespace to "` + team + `"`))
	})
}

// TestStatusNameTaken: status objects are named "<service set>.<cluster>", so service set "a.x"
// on Cluster "c" and service set "a" on Cluster "x.c" need the same one. The second set says so
// on its Ready condition, naming the first and its Cluster, rather than waiting for ever; once
// the name is free it is served.
func TestStatusNameTaken(t *testing.T) {
	ctx := context.Background()
	a, ns := objName(t, ""), objName(t, "ns")
	first := a + ".x"
	createTemplate(t, a, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "a")})
	createServiceSet(t, first, holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("dev"),
		Services: []holdfastv1.Service{service("web", a, ns)}})
	expectReady(t, first, "cluster-1")

	tenantCluster(t, clusterNamespace, "x.cluster-1", "cluster-1", map[string]string{"taken": a})
	NewWithT(t).Expect(naming.StatusName(a, "x.cluster-1")).To(Equal(naming.StatusName(first, "cluster-1")))
	second := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: a}, Spec: holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"taken": a}}},
		Services:        []holdfastv1.Service{service("web", a, ns)}}}
	NewWithT(t).Expect(hub.Create(ctx, second)).To(Succeed())
	t.Cleanup(func() { deleteServiceSet(t, a) })
	eventually(t, func(g Gomega) {
		mcs := &holdfastv1.MultiClusterService{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Name: a}, mcs)).To(Succeed())
		ready := conditions(mcs)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse), "%+v", ready)
		g.Expect(ready.Reason).To(Equal(holdfastv1.StatusNameTakenReason))
		g.Expect(ready.Message).To(ContainSubstring("Cluster " + clusterNamespace + "/x.cluster-1: ClusterServiceStatus " +
			clusterNamespace + "/" + naming.StatusName(a, "x.cluster-1") + " is MultiClusterService " + first + "'s for Cluster " +
			clusterNamespace + "/cluster-1"))
		g.Expect(ready.Message).To(ContainSubstring("rename this service set or the Cluster"))
	})

	t.Log("The first service set goes: the name is free and the second one is served")
	deleteServiceSet(t, first)
	eventually(t, func(g Gomega) {
		css := statusOf(g, a, "x.cluster-1")
		g.Expect(css.Spec.MultiClusterService).To(Equal(a))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	})
}

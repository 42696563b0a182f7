package clusterapi_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/controller/clusterapi"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/testsupport"
)

// capiCRD is Cluster API's Cluster CRD as far as discovery reads it: cluster.x-k8s.io/v1beta2,
// with a status subresource and any fields.
const capiCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusters.cluster.x-k8s.io
spec:
  group: cluster.x-k8s.io
  scope: Namespaced
  names: {plural: clusters, singular: cluster, kind: Cluster, listKind: ClusterList}
  versions:
  - name: v1beta2
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// TestClusterAPIClustersBecomeTargets: on a hub with Cluster API, a cluster.x-k8s.io Cluster with
// the kubeconfig Secret Cluster API writes becomes a Ready target once its control plane is
// initialized, receives the services its labels select, follows its label changes, and is
// removed from the fleet with its deployments when it is deleted. A Holdfast Cluster made by
// hand under the name of another Cluster API cluster is left alone.
func TestClusterAPIClustersBecomeTargets(t *testing.T) {
	testsupport.RequireBinaries(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := NewWithT(t)
	planes, err := sandbox.StartMany(ctx, []sandbox.Options{{Name: "hub"}, {Name: "workload"}})
	g.Expect(err).NotTo(HaveOccurred())
	hub, workload := planes[0], planes[1]
	t.Cleanup(func() { _ = workload.Stop(); _ = hub.Stop() })
	g.Expect(localfleet.InstallCRDs(ctx, hub)).To(Succeed())
	scheme, err := controller.Scheme()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
	c, err := client.New(hub.RESTConfig(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(yaml.Unmarshal([]byte(capiCRD), crd)).To(Succeed())
	g.Expect(c.Create(ctx, crd)).To(Succeed())
	g.Eventually(func() error {
		_, err := c.RESTMapper().RESTMapping(schema.GroupKind{Group: clusterapi.Group, Kind: "Cluster"})
		return err
	}).WithTimeout(30 * time.Second).Should(Succeed())

	// Nothing is ambiguous: "clusters" is Cluster API's alone, Holdfast's are "holdfastclusters".
	kinds, err := c.RESTMapper().KindsFor(schema.GroupVersionResource{Resource: "clusters"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(kinds).To(ConsistOf(schema.GroupVersionKind{Group: clusterapi.Group, Version: "v1beta2", Kind: "Cluster"}))
	for _, resource := range []string{"holdfastclusters", "holdfastcluster"} {
		kinds, err := c.RESTMapper().KindsFor(schema.GroupVersionResource{Resource: resource})
		g.Expect(err).NotTo(HaveOccurred(), resource)
		g.Expect(kinds).To(ConsistOf(holdfastv1.GroupVersion.WithKind("Cluster")), resource)
	}

	ctrl.SetLogger(zap.New(zap.WriteTo(&testsupport.LogBuffer{})))
	// Cluster API's clusters are in ns: a platform namespace, as the templates'.
	const ns = "fleet-capi"
	mgr, _, err := controller.NewManager(ctx, hub.RESTConfig(), controller.Options{
		MetricsAddr: "0", HealthAddr: "0", SkipNameValidation: true, ClusterAPIDiscovery: true,
		PlatformNamespaces: []string{ns, "templates"},
	})
	g.Expect(err).NotTo(HaveOccurred())
	go func() { _ = mgr.Start(ctx) }()

	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	// As Cluster API writes it: type cluster.x-k8s.io/secret, key value.
	g.Expect(c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workload-kubeconfig", Labels: map[string]string{"cluster.x-k8s.io/cluster-name": "workload"}},
		Type:       "cluster.x-k8s.io/secret",
		Data:       map[string][]byte{"value": workload.Kubeconfig()},
	})).To(Succeed())
	capi := &unstructured.Unstructured{}
	capi.SetGroupVersionKind(schema.GroupVersionKind{Group: clusterapi.Group, Version: "v1beta2", Kind: "Cluster"})
	capi.SetNamespace(ns)
	capi.SetName("workload")
	capi.SetLabels(map[string]string{"env": "capi"})
	g.Expect(c.Create(ctx, capi)).To(Succeed())
	// A Holdfast Cluster made by hand under another Cluster API cluster's name.
	manual := &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "manual", Labels: map[string]string{"mine": "yes"}},
		Spec: holdfastv1.ClusterSpec{KubeconfigSecretRef: holdfastv1.SecretKeyReference{Name: "workload-kubeconfig", Key: "value"}}}
	g.Expect(c.Create(ctx, manual)).To(Succeed())
	other := capi.DeepCopy()
	other.SetName("manual")
	other.SetResourceVersion("")
	other.SetLabels(map[string]string{"env": "capi"})
	g.Expect(c.Create(ctx, other)).To(Succeed())
	g.Expect(unstructured.SetNestedField(other.Object, true, "status", "initialization", "controlPlaneInitialized")).To(Succeed())
	g.Expect(c.Status().Update(ctx, other)).To(Succeed())

	// Not a target while its control plane is not initialized.
	g.Consistently(func() bool {
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "workload"}, &holdfastv1.Cluster{}) == nil
	}).WithTimeout(2 * time.Second).Should(BeFalse())

	g.Expect(unstructured.SetNestedField(capi.Object, true, "status", "initialization", "controlPlaneInitialized")).To(Succeed())
	g.Expect(c.Status().Update(ctx, capi)).To(Succeed())
	target := &holdfastv1.Cluster{}
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "workload"}, target)).To(Succeed())
		g.Expect(target.Labels).To(HaveKeyWithValue("env", "capi"))
		g.Expect(target.Labels).To(HaveKeyWithValue(clusterapi.DiscoveredLabel, clusterapi.DiscoveredValue))
		g.Expect(conditions.IsTrue(target, holdfastv1.ReadyCondition)).To(BeTrue(), "Ready")
	}).WithTimeout(60 * time.Second).Should(Succeed())

	// A service set selecting it by its Cluster API labels deploys to it.
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "templates"}})).To(Succeed())
	g.Expect(c.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "templates", Name: "hello"},
		Spec: holdfastv1.ServiceTemplateSpec{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello, namespace: default}\ndata: {from: holdfast}\n"}})).To(Succeed())
	g.Expect(c.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "capi"}}},
			Services:        []holdfastv1.Service{{Name: "hello", Template: holdfastv1.TemplateReference{Namespace: "templates", Name: "hello"}}},
		}})).To(Succeed())
	wc, err := client.New(workload.RESTConfig(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() error {
		return wc.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, &corev1.ConfigMap{})
	}).WithTimeout(60 * time.Second).Should(Succeed())

	// The hand-made Cluster keeps its own labels and spec.
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(manual), manual)).To(Succeed())
	g.Expect(manual.Labels).To(Equal(map[string]string{"mine": "yes"}))

	// Label changes follow; deleting the Cluster API cluster removes the target and its
	// deployment's status object.
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(capi), capi)).To(Succeed())
	capi.SetLabels(map[string]string{"env": "capi", "tier": "gold"})
	g.Expect(c.Update(ctx, capi)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "workload"}, target)).To(Succeed())
		g.Expect(target.Labels).To(HaveKeyWithValue("tier", "gold"))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	g.Expect(c.Delete(ctx, capi)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "workload"}, &holdfastv1.Cluster{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		g.Expect(err).To(HaveOccurred(), "the Holdfast Cluster is gone")
		err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.StatusName("hello", "workload")}, &holdfastv1.ClusterServiceStatus{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		g.Expect(err).To(HaveOccurred(), "its status object is gone")
	}).WithTimeout(60 * time.Second).Should(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(manual), manual)).To(Succeed(), "the hand-made Cluster stays")
}

package clusterservicestatus_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestChangesToAnotherClustersCopyAreNotDrift: on an API server two registrations share (or any
// target where Holdfast's labelled copy of a service set's object sits where that set does not
// declare it), edits and the deletion of that copy bring no reconcile and no drift record; they
// never reach the drift handler: no inventory of the cluster holds the copy, so the cache keeps a
// stub of it.
func TestChangesToAnotherClustersCopyAreNotDrift(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	other := objName(t, "other")
	ctx := context.Background()
	c1 := targets["cluster-1"]
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")

	t.Log("A copy Holdfast applied for another registration of the same API server, elsewhere")
	NewWithT(t).Expect(c1.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})).To(Succeed())
	copyOf := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": other,
			"labels":      map[string]any{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue, holdfastv1.OwnerLabel: name, holdfastv1.ServiceLabel: "web"},
			"annotations": map[string]any{holdfastv1.OwnerAnnotation: name}},
		"data": map[string]any{"cluster": "cluster-9"},
	}}
	NewWithT(t).Expect(c1.Apply(ctx, client.ApplyConfigurationFromUnstructured(copyOf), client.FieldOwner("holdfast"), client.ForceOwnership)).To(Succeed())
	// No inventory holds the copy: the cache keeps a stub of it (nothing of its labels and
	// annotations), whose changes the watch ignores (drift.Applied).
	eventually(t, func(g Gomega) {
		objects, kept := cachedConfigMaps(g, "cluster-1", other)
		g.Expect(objects).To(Equal(1))
		g.Expect(kept).To(BeZero())
	})

	editConfigMap(t, "cluster-1", other, "a", "kubectl-edit", "cluster", "edited-by-hand")
	NewWithT(t).Expect(c1.Delete(ctx, copyOf)).To(Succeed())
	consistently(t, 2*time.Second, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Drifts).To(BeEmpty())
		g.Expect(css.Status.DriftCount).To(BeZero())
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
	})
}

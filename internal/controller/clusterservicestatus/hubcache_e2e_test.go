package clusterservicestatus_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// lastApplied is kubectl's annotation of client-side apply: the object as applied, data included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// TestHubCacheHoldsNoSourceData checks that the controller's cache of the hub holds neither the
// data of ConfigMaps (any tenant's, referenced or not, would fill its memory) nor the
// annotations of Secrets and ConfigMaps (kubectl's last-applied-configuration carries the data),
// whichever way the cache is read, while a template reading a ConfigMap and a Secret still
// deploys, and a change to either redeploys.
func TestHubCacheHoldsNoSourceData(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	ctx := context.Background()
	g := NewWithT(t)
	planted := "planted-" + name
	padding := strings.Repeat("x", 512<<10)

	applied := func(obj client.Object) string {
		b, err := json.Marshal(obj)
		g.Expect(err).NotTo(HaveOccurred())
		return string(b)
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: name},
		Data: map[string]string{
			"ns.yaml":   fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns),
			"cm.yaml":   configMapManifest("from-configmap", ns, "v", "1"),
			"token.txt": planted,
		},
	}
	// Annotations may hold 256 KiB: the padding comes after.
	cm.Annotations = map[string]string{lastApplied: applied(cm)}
	cm.Data["padding"] = padding
	secret := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: name},
		Data: map[string][]byte{
			"manifest": []byte(configMapManifest("from-secret", ns, "v", "1")),
			"token":    []byte(planted),
		},
	}
	secret.Annotations = map[string]string{lastApplied: applied(secret)}
	g.Expect(secret.Annotations[lastApplied]).To(ContainSubstring(base64.StdEncoding.EncodeToString([]byte(planted))))
	createHubObject(t, cm)
	createHubObject(t, secret)
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{
		{Kind: holdfastv1.ManifestSourceConfigMap, Name: name, Key: "ns.yaml"},
		{Kind: holdfastv1.ManifestSourceConfigMap, Name: name, Key: "cm.yaml"},
		{Kind: holdfastv1.ManifestSourceSecret, Name: name, Key: "manifest"},
	}})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "from-configmap").Data).To(HaveKeyWithValue("v", "1"))
		g.Expect(getConfigMap(g, "cluster-1", ns, "from-secret").Data).To(HaveKeyWithValue("v", "1"))
	})

	t.Log("The cache holds the metadata the watches need, without annotations, and no data however it is read")
	key := client.ObjectKeyFromObject(cm)
	for _, obj := range []client.Object{metadataOf("ConfigMap"), metadataOf("Secret"), &corev1.ConfigMap{}, &corev1.Secret{}} {
		kind := fmt.Sprintf("%T", obj)
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			kind = m.Kind + " metadata"
		}
		t.Run(kind, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(hubCache.Get(ctx, key, obj)).To(Succeed())
			g.Expect(obj.GetResourceVersion()).NotTo(BeEmpty())
			g.Expect(obj.GetAnnotations()).To(BeEmpty())
			g.Expect(obj.GetManagedFields()).To(BeEmpty())
			switch o := obj.(type) {
			case *corev1.ConfigMap:
				g.Expect(o.Data).To(BeEmpty())
			case *corev1.Secret:
				g.Expect(o.Data).To(BeEmpty())
			}
			for _, value := range []string{planted, base64.StdEncoding.EncodeToString([]byte(planted)), padding[:64]} {
				g.Expect(applied(obj)).NotTo(ContainSubstring(value))
			}
		})
	}

	t.Log("Changing the ConfigMap redeploys")
	eventually(t, func(g Gomega) {
		live := &corev1.ConfigMap{}
		g.Expect(hub.Get(ctx, key, live)).To(Succeed())
		live.Data["cm.yaml"] = configMapManifest("from-configmap", ns, "v", "2")
		g.Expect(hub.Update(ctx, live)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "from-configmap").Data).To(HaveKeyWithValue("v", "2"))
	})

	t.Log("Changing the Secret redeploys")
	eventually(t, func(g Gomega) {
		live := &corev1.Secret{}
		g.Expect(hub.Get(ctx, key, live)).To(Succeed())
		live.Data["manifest"] = []byte(configMapManifest("from-secret", ns, "v", "2"))
		g.Expect(hub.Update(ctx, live)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "from-secret").Data).To(HaveKeyWithValue("v", "2"))
	})
}

// metadataOf is an empty PartialObjectMetadata of a core kind, to read its metadata.
func metadataOf(kind string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	return m
}

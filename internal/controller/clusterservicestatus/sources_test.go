package clusterservicestatus_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func createHubObject(t *testing.T, obj client.Object) {
	t.Helper()
	NewWithT(t).Expect(hub.Create(context.Background(), obj)).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(context.Background(), obj) })
}

func configMapManifest(name, ns, key, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  %s: %q\n", name, ns, key, value)
}

// TestEverySourceKind deploys one service of each source kind to the dev cluster.
func TestEverySourceKind(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	g := NewWithT(t)

	t.Log("ConfigMap and Secret references")
	createHubObject(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: name + "-refs"},
		Data: map[string]string{"ns.yaml": fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns),
			"cm.yaml": configMapManifest("from-configmap", ns, "v", "1")}})
	createHubObject(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: name + "-refs"},
		StringData: map[string]string{"manifest": configMapManifest("from-secret", ns, "v", "1")}})
	createTemplate(t, name+"-refs", holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{
		{Kind: holdfastv1.ManifestSourceConfigMap, Name: name + "-refs"},
		{Kind: holdfastv1.ManifestSourceSecret, Name: name + "-refs", Key: "manifest"},
	}})

	t.Log("A Kustomize overlay over a base, each directory in its own ConfigMap")
	createHubObject(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: name + "-base"},
		Data: map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": configMapManifest("kustomized", ns, "v", "1")}})
	createHubObject(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: name + "-overlay"},
		Data: map[string]string{"kustomization.yaml": "resources: [../base]\nnamePrefix: prod-\n"}})
	createTemplate(t, name+"-kustomize", holdfastv1.ServiceTemplateSpec{Kustomize: &holdfastv1.KustomizeSource{
		Files: []holdfastv1.KustomizeFiles{{ConfigMap: name + "-base", Directory: "base"}, {ConfigMap: name + "-overlay", Directory: "overlay"}},
		Path:  "overlay",
	}})

	t.Log("The hello chart from the HTTP repository (pinned) and the OCI registry (a range)")
	createTemplate(t, name+"-http", holdfastv1.ServiceTemplateSpec{
		Helm:   &holdfastv1.HelmSource{RepoURL: repo.URL(), Chart: "hello", Version: "1.0.0"},
		Values: "message: 'http {{ .Cluster.Name }} {{ index .Cluster.Labels \"env\" }}'\n",
	})
	createTemplate(t, name+"-oci", holdfastv1.ServiceTemplateSpec{
		Helm: &holdfastv1.HelmSource{RepoURL: registry.URL(), Chart: "hello", Version: "1.x", PlainHTTP: true},
	})

	svc := func(n, tpl string) holdfastv1.Service { return service(n, tpl, ns) }
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"),
		Services: []holdfastv1.Service{
			svc("refs", name+"-refs"), svc("kustomize", name+"-kustomize"), svc("http", name+"-http"),
			func() holdfastv1.Service {
				s := svc("oci", name+"-oci")
				s.Values = "message: 'oci {{ .Cluster.Name }}'\n"
				return s
			}(),
		},
	})
	expectReady(t, name, "cluster-1")
	eventually(t, func(g Gomega) {
		getConfigMap(g, "cluster-1", ns, "from-configmap")
		getConfigMap(g, "cluster-1", ns, "from-secret")
		getConfigMap(g, "cluster-1", ns, "prod-kustomized")
		g.Expect(getConfigMap(g, "cluster-1", ns, "http-hello").Data).To(HaveKeyWithValue("message", "http cluster-1 dev"))
		oci := getConfigMap(g, "cluster-1", ns, "oci-hello")
		g.Expect(oci.Data).To(HaveKeyWithValue("message", "oci cluster-1"))
		g.Expect(oci.Labels).To(HaveKeyWithValue("helm.sh/chart", "hello-1.1.0"))
	})
	css := statusOf(g, name, "cluster-1")
	g.Expect(css.Status.Services).To(HaveLen(4))
	g.Expect(css.Status.Services).To(HaveEach(HaveField("Ready", metav1.ConditionTrue)))

	t.Log("Changing a referenced ConfigMap redeploys")
	eventually(t, func(g Gomega) {
		cm := &corev1.ConfigMap{}
		g.Expect(hub.Get(context.Background(), client.ObjectKey{Namespace: templateNamespace, Name: name + "-refs"}, cm)).To(Succeed())
		cm.Data["cm.yaml"] = configMapManifest("from-configmap", ns, "v", "2")
		g.Expect(hub.Update(context.Background(), cm)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "from-configmap").Data).To(HaveKeyWithValue("v", "2"))
	})
}

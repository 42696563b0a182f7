package clusterservicestatus_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestMissingTargetNamespace: a service into a namespace the cluster does not have deploys — the
// namespace is created, and stays when the service is withdrawn (it is not managed); with
// createNamespace false the objects fail naming the namespace and deploy within seconds of
// someone creating it.
func TestMissingTargetNamespace(t *testing.T) {
	name := objName(t, "")
	auto, manual := objName(t, "auto"), objName(t, "manual")
	ctx := context.Background()
	c1 := targets["cluster-1"]
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{
		Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {k: v}\n"})
	off := service("manual", name, manual)
	off.CreateNamespace = ptr.To(false)
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"),
		Services:        []holdfastv1.Service{service("auto", name, auto), off},
	})

	eventually(t, func(g Gomega) {
		getConfigMap(g, "cluster-1", auto, "settings")
		css := statusOf(g, name, "cluster-1")
		rs := resourceNamed(css.Status.Resources, "ConfigMap", "settings")
		for _, r := range css.Status.Resources {
			if r.Namespace == manual {
				rs = r
			}
		}
		g.Expect(rs.Namespace).To(Equal(manual))
		g.Expect(rs.State).To(Equal(holdfastv1.ResourceFailed))
		g.Expect(rs.Message).To(ContainSubstring("namespace " + manual + " does not exist on the cluster"))
	})
	err := c1.Get(ctx, client.ObjectKey{Name: manual}, &corev1.Namespace{})
	NewWithT(t).Expect(apiNotFound(err)).To(BeTrue(), "createNamespace false created the namespace: %v", err)

	NewWithT(t).Expect(c1.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: manual}})).To(Succeed())
	created := time.Now()
	eventually(t, func(g Gomega) {
		getConfigMap(g, "cluster-1", manual, "settings")
		g.Expect(condition(statusOf(g, name, "cluster-1").Status.Conditions, holdfastv1.ReadyCondition).Status).To(BeEquivalentTo("True"))
	})
	t.Logf("deployed %s after the namespace was created", time.Since(created).Round(time.Millisecond))

	deleteServiceSet(t, name)
	eventually(t, func(g Gomega) {
		expectNoConfigMap(g, "cluster-1", auto, "settings")
	})
	NewWithT(t).Expect(c1.Get(ctx, client.ObjectKey{Name: auto}, &corev1.Namespace{})).To(Succeed(), "the created namespace stays")
}

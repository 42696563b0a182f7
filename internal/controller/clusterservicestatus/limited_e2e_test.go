package clusterservicestatus_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/onboard"
)

// limitedCluster registers on the hub a Cluster named name reaching the suite's target with an
// identity limited to namespaces (what `holdfast cluster add --target-namespaces` makes).
func limitedCluster(t *testing.T, name, target string, labels map[string]string, namespaces ...string) {
	t.Helper()
	ctx := context.Background()
	g := NewWithT(t)
	var cs kubernetes.Interface
	for _, tg := range fl.Targets {
		if tg.Name() == target {
			var err error
			cs, err = kubernetes.NewForConfig(tg.RESTConfig())
			g.Expect(err).NotTo(HaveOccurred())
			kc, err := onboard.Grant(ctx, cs, tg.RESTConfig(), onboard.Options{Namespaces: namespaces, TokenDuration: time.Hour})
			g.Expect(err).NotTo(HaveOccurred())
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: clusterNamespace, Name: name + "-kubeconfig"}, Data: map[string][]byte{"value": kc}}
			g.Expect(hub.Create(ctx, sec)).To(Succeed())
			c := &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: clusterNamespace, Name: name, Labels: labels},
				Spec: holdfastv1.ClusterSpec{KubeconfigSecretRef: holdfastv1.SecretKeyReference{Name: sec.Name, Key: "value"}}}
			g.Expect(hub.Create(ctx, c)).To(Succeed())
			t.Cleanup(func() {
				_ = hub.Delete(ctx, c)
				_ = hub.Delete(ctx, sec)
				NewWithT(t).Eventually(func() bool { return apiNotFound(hub.Get(ctx, client.ObjectKeyFromObject(c), c)) }).
					WithTimeout(timeout).WithPolling(poll).Should(BeTrue(), "Cluster %s still exists", name)
			})
			return
		}
	}
	t.Fatalf("no target %s", target)
}

// TestNamespaceLimitedIdentityWatchesItsNamespaces: a Cluster whose identity may act only in one
// namespace (no list or watch anywhere else) gets drift detection all the same: its managed kinds
// are watched in that namespace, the Drifted condition says so, and an edit by hand is put back
// at once, not at the next full reconcile.
func TestNamespaceLimitedIdentityWatchesItsNamespaces(t *testing.T) {
	ctx := context.Background()
	name, ns := objName(t, ""), objName(t, "ns")
	cluster := objName(t, "limited")
	NewWithT(t).Expect(targets["cluster-2"].Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	limitedCluster(t, cluster, "cluster-2", map[string]string{"limited": name}, ns)

	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: declared}\n"})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"limited": name}}},
		SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
		Services:        []holdfastv1.Service{service("web", name, ns)},
	})
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, cluster)
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue), "%+v", css.Status.Conditions)
		drifted := condition(css.Status.Conditions, holdfastv1.DriftedCondition)
		g.Expect(drifted.Reason).To(Equal(holdfastv1.InSyncReason))
		g.Expect(drifted.Message).To(ContainSubstring("ConfigMap watched in namespace " + ns + " only"))
	})
	statusSettled(t, name, cluster, time.Second)

	editConfigMap(t, "cluster-2", ns, "a", "kubectl-edit", "k", "edited-by-hand")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-2", ns, "a").Data).To(HaveKeyWithValue("k", "declared"))
		css := statusOf(g, name, cluster)
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "a"), HaveField("Manager", "kubectl-edit"),
			HaveField("Detection", holdfastv1.DriftDetectedByWatch), HaveField("CorrectedTime", Not(BeNil())))))
	})
}

package clusterservicestatus_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestUnreachableClusterWaitsAndRecovers: a service set declared while its cluster's API server
// is down waits with ClusterNotReady, and deploys by itself once the cluster is back.
func TestUnreachableClusterWaitsAndRecovers(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	target := fl.Targets[1] // cluster-2, env=prod
	NewWithT(t).Expect(target.StopAPIServer()).To(Succeed())
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = target.StartAPIServer(context.Background())
		}
	})
	eventually(t, func(g Gomega) {
		c := &holdfastv1.Cluster{}
		g.Expect(hub.Get(context.Background(), clusterKey("cluster-2"), c)).To(Succeed())
		g.Expect(condition(c.Status.Conditions, holdfastv1.ClusterConnectedCondition).Status).To(Equal(metav1.ConditionFalse))
	})

	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("prod"), Services: []holdfastv1.Service{service("web", name, ns)},
	})
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-2")
		cr := condition(css.Status.Conditions, holdfastv1.TargetClusterReadyCondition)
		g.Expect(cr.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(cr.Reason).To(Equal(holdfastv1.ClusterNotReadyReason))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Reason).To(Equal(holdfastv1.ClusterNotReadyReason))
	})

	NewWithT(t).Expect(target.StartAPIServer(context.Background())).To(Succeed())
	restarted = true
	expectReady(t, name, "cluster-2")
	eventually(t, func(g Gomega) { getConfigMap(g, "cluster-2", ns, "a") })
}

// TestWebhookDownIsRetried: an admission webhook that cannot be reached makes the apply fail
// with a reason saying so; it is retried with backoff and succeeds once the webhook is gone.
func TestWebhookDownIsRetried(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	ctx := context.Background()
	webhook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "deny.holdfast.test",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL: ptr.To("https://127.0.0.1:1/validate"), // nothing listens there
			},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	c1 := targets["cluster-1"]
	NewWithT(t).Expect(c1.Create(ctx, webhook)).To(Succeed())
	t.Cleanup(func() { _ = c1.Delete(ctx, webhook) })

	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "a")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), Services: []holdfastv1.Service{service("web", name, ns)},
	})
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		applied := condition(css.Status.Conditions, holdfastv1.AppliedCondition)
		g.Expect(applied.Reason).To(Equal(holdfastv1.ApplyFailedReason))
		g.Expect(applied.Message).To(ContainSubstring("deny.holdfast.test"))
		g.Expect(css.Status.Resources).To(ContainElement(And(HaveField("Name", "a"), HaveField("State", holdfastv1.ResourceFailed))))
		g.Expect(css.Status.Resources).To(ContainElement(And(HaveField("Kind", "Namespace"), HaveField("State", holdfastv1.ResourceInSync))))
	})

	NewWithT(t).Expect(c1.Delete(ctx, webhook)).To(Succeed())
	expectReady(t, name, "cluster-1")
	eventually(t, func(g Gomega) { getConfigMap(g, "cluster-1", ns, "a") })
}

package clusterservicestatus_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/admission"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/sandbox"
)

// admissionlessTarget starts a control plane that serves neither MutatingAdmissionPolicy nor
// ValidatingAdmissionPolicy, as a cluster before Kubernetes 1.30 would not, registers it on the
// hub as Cluster name with labels, and returns an admin client of it and one that acts as alice.
// The Cluster is deleted and the control plane stopped when the test ends.
func admissionlessTarget(t *testing.T, name string, labels map[string]string) (admin, alice client.Client) {
	t.Helper()
	ctx := context.Background()
	g := NewWithT(t)
	cp, err := sandbox.Start(ctx, sandbox.Options{Name: name, DisableAdmissionPolicies: true})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = cp.Stop() })
	admin, err = client.New(cp.RESTConfig(), client.Options{Scheme: hub.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	cfg := rest.CopyConfig(cp.RESTConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", Groups: []string{"system:masters"}}
	alice, err = client.New(cfg, client.Options{Scheme: hub.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())

	c, err := fleet.Register(ctx, hub, fleet.Registration{Namespace: clusterNamespace, Name: name, Labels: labels, Kubeconfig: cp.Kubeconfig()})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		_ = hub.Delete(ctx, c)
		_ = hub.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: clusterNamespace, Name: fleet.KubeconfigSecretName(name)}})
		NewWithT(t).Eventually(func() bool { return apiNotFound(hub.Get(ctx, client.ObjectKeyFromObject(c), c)) }).
			WithTimeout(timeout).WithPolling(poll).Should(BeTrue(), "Cluster %s still exists", name)
	})
	return admin, alice
}

// TestAttributionOnATargetWithoutAdmissionPolicies: on a target that serves no admission policy
// API, a service set with drift.attribution Auto and drift.prevention Deny deploys and is Ready;
// its ClusterServiceStatus says attribution and prevention are unsupported and the Cluster names the missing APIs, without either
// looking unhealthy; an edit there is detected, recorded with its field manager and no user,
// and corrected; and Holdfast leaves nothing admission-related on the target.
func TestAttributionOnATargetWithoutAdmissionPolicies(t *testing.T) {
	ctx := context.Background()
	name, ns := objName(t, ""), objName(t, "ns")
	cluster := "no-admission-policies"
	labels := map[string]string{"admission-policies": "none"}
	target, alice := admissionlessTarget(t, cluster, labels)
	NewWithT(t).Expect(target.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	// Only ConfigMaps: the target runs no kube-controller-manager to finish a Namespace's deletion.
	var inline string
	for _, cm := range []string{"a", "b"} {
		inline += fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  cluster: '{{ .Cluster.Name }}'\n", cm, ns)
	}
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: inline})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: labels}},
		SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift:           &holdfastv1.DriftPolicy{Attribution: holdfastv1.AttributionAuto, Prevention: holdfastv1.PreventionDeny},
		Services:        []holdfastv1.Service{service("web", name, ns)},
	})

	t.Log("The service set deploys and is Ready; attribution and prevention say they are unsupported, and so does the Cluster")
	expectReady(t, name, cluster)
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, cluster)
		c := condition(css.Status.Conditions, holdfastv1.AttributionCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "Attribution: %s %s", c.Reason, c.Message)
		g.Expect(c.Reason).To(Equal(holdfastv1.AttributionUnsupportedReason))
		g.Expect(entryOf(css, "MutatingAdmissionPolicy", admission.AttributionName(name)).Name).To(BeEmpty(), "no policy in the inventory")
		g.Expect(serviceOf(css, admission.AttributionService).Name).To(BeEmpty(), "no attribution service")
		p := condition(css.Status.Conditions, holdfastv1.PreventionCondition)
		g.Expect(p.Status).To(Equal(metav1.ConditionFalse), "Prevention: %s %s", p.Reason, p.Message)
		g.Expect(p.Reason).To(Equal(holdfastv1.PreventionUnsupportedReason))
		g.Expect(serviceOf(css, admission.PreventionService).Name).To(BeEmpty(), "no prevention service")

		hc := &holdfastv1.Cluster{}
		g.Expect(hub.Get(ctx, clusterKey(cluster), hc)).To(Succeed())
		ap := condition(hc.Status.Conditions, holdfastv1.AdmissionPoliciesCondition)
		g.Expect(ap.Status).To(Equal(metav1.ConditionFalse), "AdmissionPolicies: %s %s", ap.Reason, ap.Message)
		g.Expect(ap.Reason).To(Equal(holdfastv1.AdmissionPoliciesUnsupportedReason))
		g.Expect(ap.Message).To(And(ContainSubstring("mutatingadmissionpolicies (Kubernetes 1.36 or later)"),
			ContainSubstring("validatingadmissionpolicies (Kubernetes 1.30 or later)")))
		g.Expect(condition(hc.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue),
			"a Cluster without the admission policy APIs is still Ready")
	})

	t.Log("alice edits b with kubectl edit (not refused: nothing can refuse it here): detected, recorded with the field manager and no user, corrected")
	eventually(t, func(g Gomega) {
		cm := &corev1.ConfigMap{}
		g.Expect(target.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b"}, cm)).To(Succeed())
		cm.Data["cluster"] = "edited-by-alice"
		g.Expect(alice.Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, cluster)
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "b"), HaveField("Manager", "kubectl-edit"),
			HaveField("User", ""), HaveField("CorrectedTime", Not(BeNil())))))
		cm := &corev1.ConfigMap{}
		g.Expect(target.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b"}, cm)).To(Succeed())
		g.Expect(cm.Data).To(HaveKeyWithValue("cluster", cluster))
		g.Expect(cm.Annotations).NotTo(HaveKey(holdfastv1.ChangedByAnnotation), "nothing stamps on this target")
		g.Expect(driftsByUser(g, name, metrics.ValueUnknown)).To(BeNumerically(">=", 1), "the drift is counted, by no user")
	})

	t.Log("Nothing admission-related was put on the target in place of the policies")
	mutating := &admissionv1.MutatingWebhookConfigurationList{}
	validating := &admissionv1.ValidatingWebhookConfigurationList{}
	g := NewWithT(t)
	g.Expect(target.List(ctx, mutating)).To(Succeed())
	g.Expect(target.List(ctx, validating)).To(Succeed())
	g.Expect(mutating.Items).To(BeEmpty())
	g.Expect(validating.Items).To(BeEmpty())

	t.Log("Attribution and prevention Off remove the conditions")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		m.Spec.Drift.Attribution, m.Spec.Drift.Prevention = holdfastv1.AttributionOff, holdfastv1.PreventionOff
	})
	eventually(t, func(g Gomega) {
		g.Expect(statusOf(g, name, cluster).Status.Conditions).NotTo(ContainElement(HaveField("Type", BeElementOf(
			holdfastv1.AttributionCondition, holdfastv1.PreventionCondition))))
	})
}

// driftsByUser reads holdfast_drifts_by_user_total{multiclusterservice, user} from the
// controller's registry.
func driftsByUser(g Gomega, serviceSet, user string) float64 {
	return metricSeries(g, "holdfast_drifts_by_user_total", map[string]string{"multiclusterservice": serviceSet, "user": user}).GetCounter().GetValue()
}

package clusterservicestatus_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/notify"
)

// freezePolicy is a ValidatingAdmissionPolicy on a target that refuses to set ConfigMap name in
// namespace ns back to the value Holdfast declares, as a platform or security team's policy
// might: Holdfast's correction is refused by admission.
func freezePolicy(t *testing.T, cluster, ns, name, declared string) (remove func()) {
	t.Helper()
	ctx := context.Background()
	c := targets[cluster]
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "freeze-" + ns},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
				ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				}}},
			},
			Validations: []admissionv1.Validation{{
				Expression: "!(object.metadata.name == '" + name + "' && has(object.data) && 'cluster' in object.data && object.data['cluster'] == '" + declared + "')",
				Message:    "frozen by the platform team",
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	NewWithT(t).Expect(c.Create(ctx, policy)).To(Succeed())
	NewWithT(t).Expect(c.Create(ctx, binding)).To(Succeed())
	remove = func() {
		_ = c.Delete(ctx, binding)
		_ = c.Delete(ctx, policy)
	}
	t.Cleanup(remove)
	// Wait until the API server enforces it: a write of the declared value is refused.
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, cluster, ns, name)
		cm.Data["cluster"] = declared
		err := c.Update(ctx, cm, client.DryRunAll, client.FieldOwner("probe"))
		g.Expect(err).To(HaveOccurred())
		g.Expect(err.Error()).To(ContainSubstring("frozen by the platform team"))
	})
	return remove
}

// TestFailedCorrectionStaysOpen: a drift whose correction the API server refuses is never
// recorded as corrected. The object's state says Uncorrectable with the API server's reason,
// Drifted is True (CorrectionFailed), a Warning Event and a notification say so, and the
// correction is retried: once the cause is gone, the object is put back and only then the record
// is marked corrected. Members of the class: a ConfigMap and a Secret someone made immutable
// while changing them (the correction hits an immutable field), and a ConfigMap an admission
// policy refuses to set back.
func TestFailedCorrectionStaysOpen(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	ctx := context.Background()
	hooks := &receiver{}
	hookSrv := httptest.NewServer(hooks)
	defer hookSrv.Close()
	NewWithT(t).Expect(hub.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-hook", Namespace: templateNamespace},
		StringData: map[string]string{notify.SecretKeyURL: hookSrv.URL}})).To(Succeed())
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
		Inline: configMaps(ns, "a", "b") + "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: " + ns + "\nstringData:\n  password: declared-secret-value\n"})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
		Notifications: []holdfastv1.NotificationTarget{{Name: "audit", Type: holdfastv1.NotificationWebhook,
			SecretRef: holdfastv1.SecretReference{Namespace: templateNamespace, Name: name + "-hook"}}},
	})
	expectReady(t, name, "cluster-1")
	c1 := targets["cluster-1"]

	unfreeze := freezePolicy(t, "cluster-1", ns, "b", "cluster-1")
	editConfigMap(t, "cluster-1", ns, "b", "kubectl-edit", "cluster", "hand-edited")
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "a")
		cm.Data["cluster"], cm.Immutable = "hand-edited", ptr.To(true)
		g.Expect(c1.Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		sec := &corev1.Secret{}
		g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "creds"}, sec)).To(Succeed())
		sec.Data["password"], sec.Immutable = []byte("hand-typed-secret-value"), ptr.To(true)
		g.Expect(c1.Update(ctx, sec, client.FieldOwner("kubectl-edit"))).To(Succeed())
	})

	reasons := map[string]string{"a": "immutable", "creds": "immutable", "b": "frozen by the platform team"}
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		for obj, reason := range reasons {
			kind := "ConfigMap"
			if obj == "creds" {
				kind = "Secret"
			}
			rs := resourceNamed(css.Status.Resources, kind, obj)
			g.Expect(rs.State).To(Equal(holdfastv1.ResourceUncorrectable), "state of %s", obj)
			g.Expect(rs.Message).To(ContainSubstring(reason), "message of %s", obj)
			g.Expect(rs.LastDrift).NotTo(BeNil(), "last drift of %s", obj)
			g.Expect(rs.LastDrift.Manager).To(Equal("kubectl-edit"))
			var records []holdfastv1.DriftRecord
			for _, d := range css.Status.Drifts {
				if d.Kind == kind && d.Name == obj {
					records = append(records, d)
				}
			}
			g.Expect(records).NotTo(BeEmpty(), "drift records of %s", obj)
			for _, d := range records {
				g.Expect(d.CorrectedTime).To(BeNil(), "a record of %s says corrected while it is not", obj)
			}
		}
		drifted := condition(css.Status.Conditions, holdfastv1.DriftedCondition)
		g.Expect(drifted.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(drifted.Reason).To(Equal(holdfastv1.CorrectionFailedReason))
		g.Expect(drifted.Message).To(And(ContainSubstring("ConfigMap "+ns+"/a"), ContainSubstring("frozen by the platform team")))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionFalse))
	})
	// The cluster is as the editor left it: nothing claimed otherwise.
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data["cluster"]).To(Equal("hand-edited"))
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data["cluster"]).To(Equal("hand-edited"))
	})
	eventually(t, func(g Gomega) {
		notes := warningNotes(g, statusOf(g, name, "cluster-1").Name, "DriftCorrectionFailed")
		g.Expect(notes).To(ContainElement(ContainSubstring("ConfigMap " + ns + "/b")))
	})
	eventually(t, func(g Gomega) {
		var failed []string
		for _, r := range hooks.all() {
			var p struct {
				Type   string `json:"type"`
				Object struct {
					Name string `json:"name"`
				} `json:"object"`
			}
			g.Expect(json.Unmarshal(r.body, &p)).To(Succeed())
			g.Expect(p.Type).NotTo(Equal(string(notify.DriftCorrected)), "a correction was announced that did not happen: %s", r.body)
			if p.Type == string(notify.CorrectionFailed) {
				failed = append(failed, p.Object.Name)
			}
		}
		g.Expect(failed).To(ContainElements("a", "b", "creds"))
	})

	t.Log("The cause goes: the policy is removed, the immutable objects deleted; each is put back and only then marked corrected")
	unfreeze()
	deleteOutOfBand(t, "cluster-1", ns, "a")
	NewWithT(t).Expect(c1.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}})).To(Succeed())
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data["cluster"]).To(Equal("cluster-1"))
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data["cluster"]).To(Equal("cluster-1"))
		css := statusOf(g, name, "cluster-1")
		for _, obj := range []string{"a", "b"} {
			g.Expect(resourceNamed(css.Status.Resources, "ConfigMap", obj).State).To(Equal(holdfastv1.ResourceInSync))
		}
		g.Expect(resourceNamed(css.Status.Resources, "Secret", "creds").State).To(Equal(holdfastv1.ResourceInSync))
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "b"), HaveField("CorrectedTime", Not(BeNil())))))
		g.Expect(condition(css.Status.Conditions, holdfastv1.DriftedCondition).Status).To(Equal(metav1.ConditionFalse))
	})
}

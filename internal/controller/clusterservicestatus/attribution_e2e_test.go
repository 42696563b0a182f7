package clusterservicestatus_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/admission"
)

// impersonating returns a client of a target that makes every request as user, in
// system:masters and groups (the sandbox's admin may impersonate; the API server then
// authenticates the request as user, exactly as it would a client certificate with that common
// name and those organizations).
func impersonating(t *testing.T, cluster, user string, groups ...string) client.Client {
	t.Helper()
	for _, tc := range fl.Targets {
		if tc.Name() != cluster {
			continue
		}
		cfg := rest.CopyConfig(tc.RESTConfig())
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append([]string{"system:masters"}, groups...)}
		c, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	t.Fatalf("no target %s", cluster)
	return nil
}

// TestAttributionNamesTheUser: with drift.attribution Auto, Holdfast applies its
// MutatingAdmissionPolicy and binding on the target; an edit by alice with kubectl edit is
// recorded with user alice and manager kubectl-edit; Holdfast's correction is not stamped (the
// stamp still names alice) and the stamps are no drift (no loop); switching attribution Off
// removes the policy and binding from the target.
func TestAttributionNamesTheUser(t *testing.T) {
	ctx := context.Background()
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a", "b")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift:    &holdfastv1.DriftPolicy{Attribution: holdfastv1.AttributionAuto},
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	target := targets["cluster-1"]
	policyKey := client.ObjectKey{Name: admission.AttributionName(name)}
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		c := condition(css.Status.Conditions, holdfastv1.AttributionCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "Attribution: %s %s", c.Reason, c.Message)
		g.Expect(entryOf(css, "MutatingAdmissionPolicy", admission.AttributionName(name)).Service).To(Equal(admission.AttributionService))
		g.Expect(target.Get(ctx, policyKey, &admissionv1.MutatingAdmissionPolicy{})).To(Succeed())
		g.Expect(target.Get(ctx, policyKey, &admissionv1.MutatingAdmissionPolicyBinding{})).To(Succeed())
	})

	alice := impersonating(t, "cluster-1", "alice")
	t.Log("The API server runs the policy once it has loaded it: a dry run as alice shows her stamp")
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "b")
		cm.Data["probe"] = "dry-run"
		g.Expect(alice.Update(ctx, cm, client.DryRunAll, client.FieldOwner("probe"))).To(Succeed())
		g.Expect(cm.Annotations).To(HaveKeyWithValue(holdfastv1.ChangedByAnnotation, "alice"))
	})

	t.Log("alice edits b with kubectl edit")
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "b")
		cm.Data["cluster"] = "edited-by-alice"
		g.Expect(alice.Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "b"), HaveField("User", "alice"),
			HaveField("Manager", "kubectl-edit"), HaveField("CorrectedTime", Not(BeNil())))))
		cm := getConfigMap(g, "cluster-1", ns, "b")
		g.Expect(cm.Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		// Holdfast's correction was not stamped: the stamp still names alice.
		g.Expect(cm.Annotations).To(HaveKeyWithValue(holdfastv1.ChangedByAnnotation, "alice"))
		g.Expect(driftsByUser(g, name, "alice")).To(BeNumerically(">=", 1), "holdfast_drifts_by_user_total names alice")
	})
	driftsOfB := func(g Gomega) int {
		n := 0
		for _, d := range statusOf(g, name, "cluster-1").Status.Drifts {
			if d.Name == "b" {
				n++
			}
		}
		return n
	}
	before := 0
	eventually(t, func(g Gomega) { before = driftsOfB(g) })
	consistently(t, 3*time.Second, func(g Gomega) {
		g.Expect(driftsOfB(g)).To(Equal(before), "the stamps or Holdfast's own correction were taken for drift")
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		g.Expect(entryOf(statusOf(g, name, "cluster-1"), "ConfigMap", "b").State).To(Equal(holdfastv1.ResourceInSync))
	})

	t.Log("Attribution Off removes the policy and its binding")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) { m.Spec.Drift.Attribution = holdfastv1.AttributionOff })
	eventually(t, func(g Gomega) {
		g.Expect(apiNotFound(target.Get(ctx, policyKey, &admissionv1.MutatingAdmissionPolicy{}))).To(BeTrue())
		g.Expect(apiNotFound(target.Get(ctx, policyKey, &admissionv1.MutatingAdmissionPolicyBinding{}))).To(BeTrue())
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Conditions).NotTo(ContainElement(HaveField("Type", holdfastv1.AttributionCondition)))
		g.Expect(entryOf(css, "MutatingAdmissionPolicy", admission.AttributionName(name)).Name).To(BeEmpty())
	})
}

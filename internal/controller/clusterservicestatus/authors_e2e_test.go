package clusterservicestatus_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/admission"
	"holdfast.dev/holdfast/internal/fieldset"
)

// editB updates ConfigMap b of ns on cluster-1 through c, as field manager manager:
// data.cluster set to value, and the annotations given added.
func editB(t *testing.T, c client.Client, ns, manager, value string, annotations map[string]string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", ns, "b")
		cm.Data["cluster"] = value
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		for k, v := range annotations {
			cm.Annotations[k] = v
		}
		g.Expect(c.Update(context.Background(), cm, client.FieldOwner(manager))).To(Succeed())
	})
}

// driftBy waits for the drift record of ConfigMap b made by manager that set data.cluster to
// value, corrected, and returns it.
func driftBy(t *testing.T, name, manager, value string) holdfastv1.DriftRecord {
	t.Helper()
	var rec holdfastv1.DriftRecord
	eventually(t, func(g Gomega) {
		found := false
		for _, d := range statusOf(g, name, "cluster-1").Status.Drifts {
			for _, f := range d.Fields {
				if d.Name == "b" && d.Manager == manager && f.Path == ".data.cluster" && f.New == `"`+value+`"` && !found {
					rec, found = d, true
				}
			}
		}
		g.Expect(found).To(BeTrue(), "no drift of b by %s setting %s", manager, value)
		g.Expect(rec.CorrectedTime).NotTo(BeNil(), "the drift by %s is not corrected", manager)
	})
	return rec
}

// TestForgedStampsNameNoOne: the attribution stamps are two annotations anyone who may update an
// object can write. Where Holdfast's attribution policy is not in force (attribution Off), alice's
// edit carrying a stamp that names mallory, dated years ahead, is recorded with her field manager
// and no user, and so is a later edit by the cluster's admin that leaves the stamp in place. With
// attribution Auto, the admin (Holdfast's own identity there, which the policy does not stamp)
// edits again: the stamp, dated after the change, names no one; alice's next forged stamp is
// overwritten by the policy with her own name.
func TestForgedStampsNameNoOne(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a", "b")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	alice := impersonating(t, "cluster-1", "alice")
	admin := targets["cluster-1"] // Holdfast's own identity on the target
	forged := map[string]string{holdfastv1.ChangedByAnnotation: "mallory", holdfastv1.ChangedAtAnnotation: "2099-01-01T00:00:00Z"}

	t.Log("Attribution Off: alice edits b with a stamp naming mallory")
	editB(t, alice, ns, "kubectl-edit", "edited-by-alice", forged)
	g := NewWithT(t)
	g.Expect(driftBy(t, name, "kubectl-edit", "edited-by-alice").User).To(BeEmpty(), "a stamp no policy wrote named someone")

	t.Log("The admin edits b; the forged stamp stays on the object")
	editB(t, admin, ns, "admin-edit", "edited-by-admin", nil)
	g.Expect(driftBy(t, name, "admin-edit", "edited-by-admin").User).To(BeEmpty(), "a stamp left from another write named someone")
	g.Expect(getConfigMap(g, "cluster-1", ns, "b").Annotations).To(HaveKeyWithValue(holdfastv1.ChangedByAnnotation, "mallory"))

	t.Log("Attribution Auto: once the API server runs the policy, the admin's unstamped edit is not given the stamp dated after it")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		m.Spec.Drift = &holdfastv1.DriftPolicy{Attribution: holdfastv1.AttributionAuto}
	})
	eventually(t, func(g Gomega) {
		c := condition(statusOf(g, name, "cluster-1").Status.Conditions, holdfastv1.AttributionCondition)
		g.Expect(c.Reason).To(Equal(holdfastv1.AttributionActiveReason), "Attribution: %s", c.Message)
		cm := getConfigMap(g, "cluster-1", ns, "a")
		cm.Data["probe"] = "dry-run"
		g.Expect(alice.Update(context.Background(), cm, client.DryRunAll, client.FieldOwner("probe"))).To(Succeed())
		g.Expect(cm.Annotations).To(HaveKeyWithValue(holdfastv1.ChangedByAnnotation, "alice"))
	})
	editB(t, admin, ns, "admin-edit-2", "edited-by-admin-again", nil)
	g.Expect(driftBy(t, name, "admin-edit-2", "edited-by-admin-again").User).To(BeEmpty(), "a stamp dated after the change named someone")

	t.Log("alice forges again: the policy stamps her own name over it")
	editB(t, alice, ns, "kubectl-edit-2", "edited-by-alice-again", forged)
	g.Expect(driftBy(t, name, "kubectl-edit-2", "edited-by-alice-again").User).To(Equal("alice"))
}

// applyAsHoldfastsManager server-side applies ConfigMap b of ns on cluster-1 through c as field
// manager holdfast, with Holdfast's field set (the labels, Holdfast's annotations, the data) and
// data.cluster set to value, as `kubectl apply --server-side --field-manager=holdfast
// --force-conflicts` of the object as read would.
func applyAsHoldfastsManager(g Gomega, c client.Client, ns, value string, opts ...client.ApplyOption) error {
	cm := getConfigMap(g, "cluster-1", ns, "b")
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(ns)
	u.SetName("b")
	u.SetLabels(cm.Labels)
	annotations := map[string]string{}
	for k, v := range cm.Annotations {
		if strings.HasPrefix(k, "holdfast.dev/") && k != holdfastv1.ChangedByAnnotation && k != holdfastv1.ChangedAtAnnotation {
			annotations[k] = v
		}
	}
	u.SetAnnotations(annotations)
	data := map[string]any{}
	for k, v := range cm.Data {
		data[k] = v
	}
	data["cluster"] = value
	u.Object["data"] = data
	return c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u),
		append([]client.ApplyOption{client.ForceOwnership, client.FieldOwner(fieldset.FieldManager)}, opts...)...)
}

// TestWritesUnderHoldfastsName: a server-side apply by mallory as field manager holdfast, with
// Holdfast's own field set, is refused under prevention Deny, naming why; with prevention Off it
// goes through and is drift all the same: recorded with the manager holdfast and, attribution
// being Auto, mallory's name, and put back.
func TestWritesUnderHoldfastsName(t *testing.T) {
	ctx := context.Background()
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a", "b")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift:    &holdfastv1.DriftPolicy{Attribution: holdfastv1.AttributionAuto, Prevention: holdfastv1.PreventionDeny},
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	mallory := impersonating(t, "cluster-1", "mallory")
	target := targets["cluster-1"]

	t.Log("Prevention Deny: mallory's apply as field manager holdfast is refused once the API server runs the policy")
	refused := func(g Gomega, err error) {
		g.Expect(err).To(MatchError(And(
			ContainSubstring("ConfigMap "+ns+"/b is managed by Holdfast (service set "+name+", service web)"),
			ContainSubstring(`writing as field manager "holdfast" is refused`))))
	}
	eventually(t, func(g Gomega) { refused(g, applyAsHoldfastsManager(g, mallory, ns, "dry-run", client.DryRunAll)) })
	g := NewWithT(t)
	refused(g, applyAsHoldfastsManager(g, mallory, ns, "edited-by-mallory"))
	g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data).To(HaveKeyWithValue("cluster", "cluster-1"))

	t.Log("Prevention Off: the apply goes through, and is drift, recorded with mallory's name and put back")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) { m.Spec.Drift.Prevention = holdfastv1.PreventionOff })
	policyKey := client.ObjectKey{Name: admission.PreventionName(name, holdfastv1.PreventionDeny)}
	eventually(t, func(g Gomega) {
		g.Expect(apiNotFound(target.Get(ctx, policyKey, &admissionv1.ValidatingAdmissionPolicyBinding{}))).To(BeTrue())
		g.Expect(statusOf(g, name, "cluster-1").Status.Conditions).NotTo(ContainElement(HaveField("Type", holdfastv1.PreventionCondition)))
	})
	eventually(t, func(g Gomega) { g.Expect(applyAsHoldfastsManager(g, mallory, ns, "edited-by-mallory")).To(Succeed()) })
	rec := driftBy(t, name, fieldset.FieldManager, "edited-by-mallory")
	g.Expect(rec.User).To(Equal("mallory"))
	g.Expect(rec.Operation).To(Equal(string(metav1.ManagedFieldsOperationApply)))
	g.Expect(rec.Fields).To(ContainElement(And(HaveField("Path", ".data.cluster"), HaveField("New", `"edited-by-mallory"`))))
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
		g.Expect(entryOf(statusOf(g, name, "cluster-1"), "ConfigMap", "b").State).To(Equal(holdfastv1.ResourceInSync))
	})
}

package clusterservicestatus_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/admission"
)

// TestPrevention: with drift.prevention Deny, alice's edit and deletion of managed objects are
// refused with a message naming the service set; under Warn (the docs service's override) her
// edit goes through, she is told, and it is drift; bob, in the break-glass group, edits and
// deletes, and his changes are drift as before (his edit attributed to him; the deletion's user
// unknown: nothing on the cluster records who deleted an object); the cluster's own controllers
// keep working (the deployment controller updates the managed Deployment, the garbage collector
// deletes its dependents in a foreground deletion, the namespace controller empties a deleted
// namespace); switching prevention Off removes the policy and binding.
func TestPrevention(t *testing.T) {
	ctx := context.Background()
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
		Inline: configMaps(ns, "a", "b") + "---\n" + deployment("api", 1, "", "", "")})
	docsNs := objName(t, "docs")
	createTemplate(t, name+"-docs", holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(docsNs, "guide")})
	docs := service("docs", name+"-docs", docsNs)
	docs.Drift = &holdfastv1.ServiceDriftPolicy{Prevention: holdfastv1.PreventionWarn}
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift: &holdfastv1.DriftPolicy{Attribution: holdfastv1.AttributionAuto, Prevention: holdfastv1.PreventionDeny,
			BreakGlass: &holdfastv1.BreakGlass{Groups: []string{"oncall"}},
			// Until the API server loads the policy, alice's edits go through and are corrected,
			// as many times as the loop below tries: no fight (drift.Fights) is under test here.
			Fight: &holdfastv1.FightPolicy{MaxCorrections: 100}},
		Services: []holdfastv1.Service{service("web", name, ns), docs},
	})
	target := targets["cluster-1"]
	policyKey := client.ObjectKey{Name: admission.PreventionName(name, holdfastv1.PreventionDeny)}
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		c := condition(css.Status.Conditions, holdfastv1.PreventionCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "Prevention: %s %s", c.Reason, c.Message)
		g.Expect(c.Message).To(And(ContainSubstring(policyKey.Name+" (Deny: [web])"),
			ContainSubstring(admission.PreventionName(name, holdfastv1.PreventionWarn)+" (Warn: [docs])")))
		g.Expect(entryOf(css, "ValidatingAdmissionPolicy", policyKey.Name).Service).To(Equal(admission.PreventionService))
		g.Expect(target.Get(ctx, policyKey, &admissionv1.ValidatingAdmissionPolicy{})).To(Succeed())
		g.Expect(target.Get(ctx, policyKey, &admissionv1.ValidatingAdmissionPolicyBinding{})).To(Succeed())
	})

	alice := impersonating(t, "cluster-1", "alice")
	bob := impersonating(t, "cluster-1", "bob", "oncall")
	editB := func(c client.Client, value string) error {
		cm := &corev1.ConfigMap{}
		if err := target.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b"}, cm); err != nil {
			return err
		}
		cm.Data["cluster"] = value
		return c.Update(ctx, cm, client.FieldOwner("kubectl-edit"))
	}
	t.Log("alice's edit is refused once the API server has loaded the policy")
	eventually(t, func(g Gomega) {
		err := editB(alice, "edited-by-alice")
		g.Expect(err).To(MatchError(And(
			ContainSubstring("ConfigMap "+ns+"/b is managed by Holdfast (service set "+name+", service web)"),
			ContainSubstring("refused (drift.prevention Deny)"))))
	})
	g := NewWithT(t)
	g.Expect(alice.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}})).To(
		MatchError(ContainSubstring("deleting it is refused")))
	g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data).To(HaveKeyWithValue("cluster", "cluster-1"))

	t.Log("The docs service is under Warn: alice's edit goes through, she is told, and it is drift")
	warned := &warningLog{}
	cfg := rest.CopyConfig(fl.Targets[0].RESTConfig())
	g.Expect(fl.Targets[0].Name()).To(Equal("cluster-1"))
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", Groups: []string{"system:masters"}}
	cfg.WarningHandlerWithContext = warned
	aliceWarned, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	eventually(t, func(g Gomega) {
		cm := getConfigMap(g, "cluster-1", docsNs, "guide")
		cm.Data["cluster"] = "edited-by-alice"
		g.Expect(aliceWarned.Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())
		g.Expect(warned.String()).To(ContainSubstring("ConfigMap " + docsNs + "/guide is managed by Holdfast (service set " + name +
			", service docs): this change of fields Holdfast manages is drift"))
	})
	eventually(t, func(g Gomega) {
		g.Expect(statusOf(g, name, "cluster-1").Status.Drifts).To(ContainElement(And(HaveField("Name", "guide"), HaveField("User", "alice"),
			HaveField("CorrectedTime", Not(BeNil())))))
	})

	t.Log("bob, break-glass, edits b: drift, attributed to him, corrected")
	g.Expect(editB(bob, "edited-by-bob")).To(Succeed())
	eventually(t, func(g Gomega) {
		g.Expect(statusOf(g, name, "cluster-1").Status.Drifts).To(ContainElement(And(HaveField("Name", "b"), HaveField("User", "bob"),
			HaveField("Manager", "kubectl-edit"), HaveField("CorrectedTime", Not(BeNil())))))
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
	})
	t.Log("bob deletes a: drift, re-created; who deleted it is not known")
	old := getConfigMap(g, "cluster-1", ns, "a")
	g.Expect(bob.Delete(ctx, old)).To(Succeed())
	eventually(t, func(g Gomega) {
		g.Expect(statusOf(g, name, "cluster-1").Status.Drifts).To(ContainElement(And(HaveField("Name", "a"), HaveField("User", ""),
			HaveField("CorrectedTime", Not(BeNil())))))
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").UID).NotTo(Equal(old.UID))
	})

	t.Log("The deployment controller updates the managed Deployment: a new revision")
	updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) {
		tpl.Spec.Inline = strings.Replace(tpl.Spec.Inline, "registry.example/app:1", "registry.example/app:2", 1)
	})
	api := &appsv1.Deployment{}
	eventually(t, func(g Gomega) {
		g.Expect(target.Get(ctx, client.ObjectKey{Namespace: ns, Name: "api"}, api)).To(Succeed())
		g.Expect(api.Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example/app:2"))
		g.Expect(api.Annotations).To(HaveKeyWithValue("deployment.kubernetes.io/revision", "2"))
		g.Expect(replicaSetsOf(g, ns, api.UID)).To(HaveLen(2))
	})

	t.Log("The garbage collector deletes the Deployment's ReplicaSets in a foreground deletion, then the Deployment")
	g.Expect(bob.Delete(ctx, api, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
	eventually(t, func(g Gomega) {
		g.Expect(replicaSetsOf(g, ns, api.UID)).To(BeEmpty())
		now := &appsv1.Deployment{}
		err := target.Get(ctx, client.ObjectKey{Namespace: ns, Name: "api"}, now)
		g.Expect(apiNotFound(err) || (err == nil && now.UID != api.UID)).To(BeTrue(), "the Deployment %s is still there", api.UID)
	})

	t.Log("The namespace is managed too: alice may not delete it, bob may, and the namespace controller then deletes the managed objects in it")
	namespace := &corev1.Namespace{}
	g.Expect(target.Get(ctx, client.ObjectKey{Name: ns}, namespace)).To(Succeed())
	g.Expect(alice.Delete(ctx, namespace)).To(MatchError(ContainSubstring("Namespace " + ns + " is managed by Holdfast")))
	g.Expect(bob.Delete(ctx, namespace)).To(Succeed())
	eventually(t, func(g Gomega) {
		now := &corev1.Namespace{}
		err := target.Get(ctx, client.ObjectKey{Name: ns}, now)
		g.Expect(apiNotFound(err) || (err == nil && now.UID != namespace.UID)).To(BeTrue(), "namespace %s still %s", ns, now.Status.Phase)
	})

	t.Log("Prevention Off removes the policy and its binding; alice's edit goes through (and is drift)")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		m.Spec.Drift.Prevention = holdfastv1.PreventionOff
		m.Spec.Services[1].Drift.Prevention = ""
	})
	warnKey := client.ObjectKey{Name: admission.PreventionName(name, holdfastv1.PreventionWarn)}
	eventually(t, func(g Gomega) {
		for _, key := range []client.ObjectKey{policyKey, warnKey} {
			g.Expect(apiNotFound(target.Get(ctx, key, &admissionv1.ValidatingAdmissionPolicy{}))).To(BeTrue(), key.Name)
			g.Expect(apiNotFound(target.Get(ctx, key, &admissionv1.ValidatingAdmissionPolicyBinding{}))).To(BeTrue(), key.Name)
		}
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Conditions).NotTo(ContainElement(HaveField("Type", holdfastv1.PreventionCondition)))
	})
	eventually(t, func(g Gomega) { g.Expect(editB(alice, "edited-by-alice")).To(Succeed()) })
	eventually(t, func(g Gomega) {
		g.Expect(statusOf(g, name, "cluster-1").Status.Drifts).To(ContainElement(And(HaveField("Name", "b"), HaveField("User", "alice"))))
	})
}

// warningLog keeps the warnings the API server sent a client.
type warningLog struct {
	mu   sync.Mutex
	text strings.Builder
}

func (w *warningLog) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, message string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.text.WriteString(message + "\n")
}

func (w *warningLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.text.String()
}

// replicaSetsOf lists the ReplicaSets in ns owned by the Deployment with uid.
func replicaSetsOf(g Gomega, ns string, uid types.UID) []appsv1.ReplicaSet {
	list := &appsv1.ReplicaSetList{}
	g.Expect(targets["cluster-1"].List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	var out []appsv1.ReplicaSet
	for _, rs := range list.Items {
		for _, o := range rs.OwnerReferences {
			if o.UID == uid {
				out = append(out, rs)
			}
		}
	}
	return out
}

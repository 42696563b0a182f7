package admission_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/admission"
	"holdfast.dev/holdfast/internal/fieldset"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/testsupport"
)

// warnings collects the warnings the API server sends a client.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

func (w *warnings) all() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.msgs, "\n")
}

// TestPreventionOnAnAPIServer runs the prevention policies PreventionObjects builds on a real
// API server: what Deny refuses (Holdfast's fields, deletions) and lets through (new fields,
// unchanged values, ignored paths by service, kind, name and list item, break-glass users and
// groups, the cluster's own controllers, Holdfast, exempted objects, terminating namespaces),
// and that Warn tells the client and lets the change through.
func TestPreventionOnAnAPIServer(t *testing.T) {
	testsupport.RequireBinaries(t)
	g := NewWithT(t)
	ctx := context.Background()
	cp, err := sandbox.Start(ctx, sandbox.Options{Name: "prevention"})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = cp.Stop() })

	as := func(user string, w *warnings, groups ...string) client.Client {
		cfg := rest.CopyConfig(cp.RESTConfig())
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append([]string{"system:masters"}, groups...)}
		if w != nil {
			cfg.WarningHandlerWithContext = w
		}
		c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
		g.Expect(err).NotTo(HaveOccurred())
		return c
	}
	admin := as("admin", nil)
	holdfast := as("holdfast-agent", nil)
	aliceWarnings := &warnings{}
	alice := as("alice", aliceWarnings)
	oncall := as("bob", nil, "oncall")
	carol := as("carol", nil)
	gc := as("system:serviceaccount:kube-system:generic-garbage-collector", nil, "system:serviceaccounts", "system:serviceaccounts:kube-system")

	objs, err := admission.PreventionObjects(admission.Prevention{
		ServiceSet: "shop",
		Holdfast:   []string{"holdfast-agent"},
		BreakGlass: holdfastv1.BreakGlass{Users: []string{"carol"}, Groups: []string{"oncall"}},
		Services: []admission.PreventedService{
			{Name: "web", Mode: holdfastv1.PreventionDeny, Ignore: []holdfastv1.IgnoreRule{
				{Paths: []string{"/data/rotated"}},
				{Paths: []string{"/data/tuning"}, Target: &holdfastv1.ResourceSelector{Kind: "ConfigMap", Name: "tuned-*",
					LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front"}}}}}},
				{Paths: []string{"/spec/template/spec/containers/*/image"}, Target: &holdfastv1.ResourceSelector{Group: ptr.To("apps"), Kind: "Deployment"}},
			}},
			{Name: "docs", Mode: holdfastv1.PreventionWarn},
		},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(HaveLen(4), "a policy and binding for Deny and for Warn")
	for _, o := range objs {
		g.Expect(admin.Create(ctx, o)).To(Succeed(), "%s %s", o.GetKind(), o.GetName())
	}

	labels := func(service string, extra map[string]string) map[string]string {
		l := map[string]string{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue, holdfastv1.OwnerLabel: "shop", holdfastv1.ServiceLabel: service}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	applyAs := func(g Gomega, c client.Client, obj client.Object) error {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		g.Expect(err).NotTo(HaveOccurred())
		u := &unstructured.Unstructured{Object: m}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "status")
		return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.ForceOwnership, client.FieldOwner(fieldset.FieldManager))
	}
	applyAsHoldfast := func(g Gomega, obj client.Object) { g.Expect(applyAs(g, holdfast, obj)).To(Succeed()) }
	configMap := func(name, service string, extra map[string]string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels(service, extra)}, Data: data}
	}
	edit := func(c client.Client, name string, change func(cm *corev1.ConfigMap)) error {
		cm := &corev1.ConfigMap{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, cm); err != nil {
			return err
		}
		change(cm)
		return c.Update(ctx, cm, client.FieldOwner("kubectl-edit"))
	}
	set := func(k, v string) func(*corev1.ConfigMap) { return func(cm *corev1.ConfigMap) { cm.Data[k] = v } }

	t.Log("The API server loads the policy: alice's change of Holdfast's field is refused, naming the set and service")
	g.Eventually(func(g Gomega) error {
		applyAsHoldfast(g, configMap("app", "web", nil, map[string]string{"color": "blue", "rotated": "1"}))
		return edit(alice, "app", set("color", "red"))
	}, 20*time.Second, 200*time.Millisecond).Should(
		MatchError(And(ContainSubstring("ConfigMap default/app is managed by Holdfast (service set shop, service web)"),
			ContainSubstring("refused (drift.prevention Deny)"), ContainSubstring("spec.drift.breakGlass"))))

	g.Expect(edit(alice, "app", func(cm *corev1.ConfigMap) { delete(cm.Data, "color") })).To(MatchError(ContainSubstring("refused")), "removing Holdfast's field")
	g.Expect(edit(alice, "app", func(cm *corev1.ConfigMap) { cm.Labels[holdfastv1.ServiceLabel] = "other" })).To(MatchError(ContainSubstring("refused")), "relabelling it out of the policy")
	g.Expect(edit(alice, "app", set("color", "blue"))).To(Succeed(), "a value set to what it is changes nothing")
	g.Expect(edit(alice, "app", set("extra", "mine"))).To(Succeed(), "a field Holdfast does not manage")
	g.Expect(edit(alice, "app", set("rotated", "2"))).To(Succeed(), "an ignored path (the set's rule)")
	g.Expect(edit(gc, "app", set("color", "gc"))).To(Succeed(), "the cluster's own controllers")
	g.Expect(edit(oncall, "app", set("color", "oncall"))).To(Succeed(), "a break-glass group")
	g.Expect(edit(carol, "app", set("color", "carol"))).To(Succeed(), "a break-glass user")
	applyAsHoldfast(g, configMap("app", "web", nil, map[string]string{"color": "blue", "rotated": "1"}))
	g.Expect(edit(alice, "app", set("color", "red"))).To(MatchError(ContainSubstring("refused")), "Holdfast took its field back")

	t.Log("Writing under Holdfast's field manager name is refused, though Holdfast's field set stays as it was")
	claimed := MatchError(And(ContainSubstring("ConfigMap default/app is managed by Holdfast (service set shop, service web)"),
		ContainSubstring(`writing as field manager "holdfast" is refused`)))
	g.Expect(applyAs(g, alice, configMap("app", "web", nil, map[string]string{"color": "mallory", "rotated": "1"}))).To(claimed, "a server-side apply")
	g.Expect(edit(alice, "app", func(cm *corev1.ConfigMap) {})).To(Succeed(), "an update that changes nothing")
	cm := &corev1.ConfigMap{}
	g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "app"}, cm)).To(Succeed())
	cm.Data["color"] = "mallory"
	g.Expect(alice.Update(ctx, cm, client.FieldOwner(fieldset.FieldManager))).To(claimed, "an update")
	g.Expect(applyAs(g, carol, configMap("app", "web", nil, map[string]string{"color": "blue", "rotated": "1"}))).To(Succeed(), "break-glass (drift all the same)")
	applyAsHoldfast(g, configMap("app", "web", nil, map[string]string{"color": "blue", "rotated": "1"}))

	t.Log("A rule with a target ignores its path only in the objects it selects")
	applyAsHoldfast(g, configMap("tuned-1", "web", map[string]string{"tier": "front"}, map[string]string{"tuning": "a", "color": "blue"}))
	applyAsHoldfast(g, configMap("tuned-2", "web", map[string]string{"tier": "back"}, map[string]string{"tuning": "a"}))
	applyAsHoldfast(g, configMap("other", "web", map[string]string{"tier": "front"}, map[string]string{"tuning": "a"}))
	g.Expect(edit(alice, "tuned-1", set("tuning", "b"))).To(Succeed())
	g.Expect(edit(alice, "tuned-1", set("color", "red"))).To(MatchError(ContainSubstring("refused")), "only the ignored path")
	g.Expect(edit(alice, "tuned-2", set("tuning", "b"))).To(MatchError(ContainSubstring("refused")), "label selector")
	g.Expect(edit(alice, "other", set("tuning", "b"))).To(MatchError(ContainSubstring("refused")), "name pattern")

	t.Log("A path through any list item: the containers' images")
	dep := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default", Labels: labels("web", nil)},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "api"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1", Args: []string{"serve"}}, {Name: "proxy", Image: "proxy:1"}}}}}}
	applyAsHoldfast(g, dep)
	editDeployment := func(change func(d *appsv1.Deployment)) error {
		d := &appsv1.Deployment{}
		g.Expect(admin.Get(ctx, client.ObjectKeyFromObject(dep), d)).To(Succeed())
		change(d)
		return alice.Update(ctx, d, client.FieldOwner("kubectl-set"))
	}
	g.Expect(editDeployment(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[1].Image = "proxy:2" })).To(Succeed())
	g.Expect(editDeployment(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Args = []string{"debug"} })).To(MatchError(ContainSubstring("refused")))
	g.Expect(editDeployment(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](5) })).To(Succeed(), "replicas: defaulted, not Holdfast's")

	t.Log("An object exempted on the cluster is not covered")
	applyAsHoldfast(g, configMap("exempt", "web", nil, map[string]string{"color": "blue"}))
	g.Expect(edit(admin, "exempt", func(cm *corev1.ConfigMap) {
		cm.Annotations = map[string]string{holdfastv1.DriftIgnoreAnnotation: "true"}
	})).To(Succeed())
	g.Expect(edit(alice, "exempt", set("color", "red"))).To(Succeed())

	t.Log("Deletion is refused, except for break-glass and in a namespace being deleted")
	g.Expect(alice.Delete(ctx, configMap("app", "web", nil, nil))).To(MatchError(ContainSubstring("deleting it is refused")))
	g.Expect(oncall.Delete(ctx, configMap("tuned-2", "web", nil, nil))).To(Succeed())

	t.Log("Warn: the change goes through and the client is told")
	g.Eventually(func(g Gomega) {
		applyAsHoldfast(g, configMap("guide", "docs", nil, map[string]string{"title": "Guide"}))
		g.Expect(edit(alice, "guide", set("title", "Mine"))).To(Succeed())
		g.Expect(aliceWarnings.all()).To(ContainSubstring("ConfigMap default/guide is managed by Holdfast (service set shop, service docs): this change of fields Holdfast manages is drift"))
	}, 20*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(applyAs(g, alice, configMap("guide", "docs", nil, map[string]string{"title": "Claimed"}))).To(Succeed())
	g.Expect(aliceWarnings.all()).To(ContainSubstring(`writing as field manager "holdfast", Holdfast's own, does not hide a change`))
	g.Expect(alice.Delete(ctx, configMap("guide", "docs", nil, nil))).To(Succeed())
	g.Expect(aliceWarnings.all()).To(ContainSubstring("it will be recorded as drift and re-created"))

	t.Log("A namespace being deleted takes its managed objects, whoever deletes them")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}
	g.Expect(admin.Create(ctx, ns)).To(Succeed())
	doomed := configMap("doomed", "web", nil, map[string]string{"color": "blue"})
	doomed.Namespace = "team"
	applyAsHoldfast(g, doomed)
	g.Expect(alice.Delete(ctx, doomed)).To(MatchError(ContainSubstring("refused")))
	// Without kube-controller-manager nothing finishes the namespace's deletion: it stays
	// Terminating with its objects, as the namespace controller would find it.
	g.Expect(admin.Delete(ctx, ns)).To(Succeed())
	// The policy sees the namespace through the API server's own informer, which learns of the
	// deletion a moment later (CI: refused once right after the delete).
	g.Eventually(func() error { return alice.Delete(ctx, doomed) }, 10*time.Second, 100*time.Millisecond).Should(Succeed())
}

package clusterservicestatus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/rollout"
)

// TestSubstitutedRevisionIsRefused: a platform service set with a rollout serves a tenant's
// namespace, so its revisions are ControllerRevisions there. A tenant allowed only to write
// ControllerRevisions in its namespace replaces the revision its Cluster deploys with one that
// keeps the name, labels and owner but makes the platform template read a platform Secret of
// manifests (the platform's own, holding a password). Nothing of it is applied: the status
// object says RevisionRefused, naming the revision and why, with a Warning Event; the
// MultiClusterService controller puts the revision back (when the status change brings it to a
// reconcile, or at the latest on request), and the set deploys as declared.
func TestSubstitutedRevisionIsRefused(t *testing.T) {
	ctx := context.Background()
	restartManagerWith(t, func(o *controller.Options) {
		o.PlatformNamespaces = []string{clusterNamespace, templateNamespace}
	})
	g := NewWithT(t)
	name, team, ns := objName(t, ""), objName(t, "team"), objName(t, "ns")
	g.Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}})).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}) })
	tenantCluster(t, team, "served", "cluster-2", map[string]string{"revision-trust": name})

	t.Log("The platform keeps manifests with a password in a Secret of a platform namespace")
	const password = "platform-password-7c1e"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: name + "-manifests"},
		StringData: map[string]string{"m.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen, namespace: %s}\ndata: {password: %s}\n", ns, password)}}
	g.Expect(hub.Create(ctx, secret)).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(ctx, secret) })

	t.Log("A platform service set with a rollout serves the tenant's namespace")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: fmt.Sprintf(
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: %s}\ndata: {from: platform}\n", ns, ns)})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: holdfastv1.ClusterSelector{Namespaces: []string{team},
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"revision-trust": name}}},
		SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("app", name, ns)},
		Rollout:  &holdfastv1.RolloutStrategy{},
	})
	statusKey := client.ObjectKey{Namespace: team, Name: naming.StatusName(name, "served")}
	css := &holdfastv1.ClusterServiceStatus{}
	eventually(t, func(g Gomega) {
		g.Expect(hub.Get(ctx, statusKey, css)).To(Succeed())
		g.Expect(css.Spec.Revision).NotTo(BeEmpty())
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(getConfigMap(g, "cluster-2", ns, "app").Data).To(HaveKeyWithValue("from", "platform"))
	})
	revision := css.Spec.Revision

	t.Log("From now on, nothing from the substitute may reach the tenant's cluster")
	var leaked atomic.Value
	stop, watched := make(chan struct{}), sync.WaitGroup{}
	watched.Go(func() {
		for {
			cm := &corev1.ConfigMap{}
			if err := targets["cluster-2"].Get(ctx, client.ObjectKey{Namespace: ns, Name: "stolen"}, cm); err == nil {
				leaked.Store(fmt.Sprint(cm.Data))
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	defer func() { close(stop); watched.Wait() }()

	t.Log("A tenant who may write ControllerRevisions in its namespace substitutes the revision")
	tenant := tenantRevisionWriter(t, team)
	original := &appsv1.ControllerRevision{}
	g.Expect(tenant.Get(ctx, client.ObjectKey{Namespace: team, Name: revision}, original)).To(Succeed())
	snap := &rollout.Snapshot{}
	g.Expect(json.Unmarshal(original.Data.Raw, snap)).To(Succeed())
	g.Expect(snap.Templates).To(HaveLen(1))
	snap.Templates[0].Spec = holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceSecret, Name: secret.Name}}}
	forgedData, err := json.Marshal(snap)
	g.Expect(err).NotTo(HaveOccurred())
	forged := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: revision,
		Labels: original.Labels, OwnerReferences: original.OwnerReferences}, Data: runtime.RawExtension{Raw: forgedData}, Revision: original.Revision}
	g.Expect(tenant.Delete(ctx, original)).To(Succeed())
	g.Expect(tenant.Create(ctx, forged)).To(Succeed())
	eventually(t, func(g Gomega) {
		seen := &appsv1.ControllerRevision{}
		g.Expect(hubCache.Get(ctx, client.ObjectKeyFromObject(forged), seen)).To(Succeed())
		g.Expect(seen.UID).To(Equal(forged.UID), "the controllers' cache has the substitute")
	})

	// A drift on the tenant's cluster brings the status object to a reconcile, and nothing else
	// to the MultiClusterService controller, which would put the revision back.
	t.Log("The next reconcile of the status object refuses it, saying which revision and why")
	editConfigMap(t, "cluster-2", ns, "app", "kubectl-edit", "from", "by-hand")
	eventually(t, func(g Gomega) {
		g.Expect(hub.Get(ctx, statusKey, css)).To(Succeed())
		rendered := condition(css.Status.Conditions, holdfastv1.RenderedCondition)
		g.Expect(rendered.Reason).To(Equal(holdfastv1.RevisionRefusedReason))
		g.Expect(rendered.Message).To(And(ContainSubstring("ControllerRevision "+team+"/"+revision+" is not a revision Holdfast made"),
			ContainSubstring("its data does not match its name"), ContainSubstring("nothing is deployed from it")))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionFalse))
	})
	eventually(t, func(g Gomega) {
		events := &eventsv1.EventList{}
		g.Expect(hub.List(ctx, events, client.InNamespace(team))).To(Succeed())
		var notes []string
		for _, e := range events.Items {
			if e.Regarding.Name == statusKey.Name && e.Reason == holdfastv1.RevisionRefusedReason && e.Type == corev1.EventTypeWarning {
				notes = append(notes, e.Note)
			}
		}
		g.Expect(notes).To(ContainElement(ContainSubstring(revision)))
	})

	t.Log("The MultiClusterService controller puts the revision back; the set deploys as declared")
	requestReconcile(t, &holdfastv1.MultiClusterService{}, client.ObjectKey{Name: name})
	eventually(t, func(g Gomega) {
		cr := &appsv1.ControllerRevision{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: team, Name: revision}, cr)).To(Succeed())
		g.Expect(cr.UID).NotTo(Equal(forged.UID))
		g.Expect(cr.Data.Raw).To(MatchJSON(original.Data.Raw))
		g.Expect(hub.Get(ctx, statusKey, css)).To(Succeed())
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(getConfigMap(g, "cluster-2", ns, "app").Data).To(HaveKeyWithValue("from", "platform"))
	})
	expectNoConfigMap(NewWithT(t), "cluster-2", ns, "stolen")
	if got := leaked.Load(); got != nil {
		t.Fatalf("the substituted revision was applied: ConfigMap %s/stolen on the tenant's cluster held %s", ns, got)
	}
}

// tenantRevisionWriter returns a hub client acting as a user who may only read and write
// ControllerRevisions in namespace ns.
func tenantRevisionWriter(t *testing.T, ns string) client.Client {
	t.Helper()
	ctx := context.Background()
	g := NewWithT(t)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "revision-writer"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"controllerrevisions"}, Verbs: []string{"get", "list", "create", "delete"}}}}
	g.Expect(hub.Create(ctx, role)).To(Succeed())
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "revision-writer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "mallory"}}}
	g.Expect(hub.Create(ctx, binding)).To(Succeed())
	cfg := rest.CopyConfig(fl.Hub.RESTConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "mallory"}
	c, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	return c
}

// requestReconcile asks for a full reconcile of obj (a MultiClusterService or a
// ClusterServiceStatus) with holdfast.dev/reconcile-requested-at, as `holdfast reconcile` does.
func requestReconcile(t *testing.T, obj client.Object, key client.ObjectKey) {
	t.Helper()
	eventually(t, func(g Gomega) {
		g.Expect(hub.Get(context.Background(), key, obj)).To(Succeed())
		a := obj.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[holdfastv1.ReconcileRequestedAtAnnotation] = time.Now().Format(time.RFC3339Nano)
		obj.SetAnnotations(a)
		g.Expect(hub.Update(context.Background(), obj)).To(Succeed())
	})
}

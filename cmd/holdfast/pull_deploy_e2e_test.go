package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/agent"
	"holdfast.dev/holdfast/internal/agentaccess"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/notify"
	"holdfast.dev/holdfast/internal/onboard"
	"holdfast.dev/holdfast/internal/sandbox"
)

// TestPullClusterIsDeployedAndCorrectedByItsAgent: a Pull cluster the hub cannot reach (the
// hub's controller has no kubeconfig of it, and runs with the chart's rights) receives a
// service set's services through its agent; alice's edit of a deployed object is put back by
// the agent and recorded on the hub with her name; with the hub's API server stopped, her next
// edit is still put back; the agent restarted while the hub is away starts from what it kept and
// puts her next edit back too, and its record reaches the hub once the API server is back; the
// status object deleted on the hub, the agent withdraws what it applied.
func TestPullClusterIsDeployedAndCorrectedByItsAgent(t *testing.T) {
	f := startPullFleet(t)
	ctx, g, hub, hubPlane, edge, edgeClient, ns := t.Context(), NewWithT(t), f.hub, f.hubPlane, f.edge, f.edgeClient, f.ns

	t.Log("A service set selecting the Pull cluster: its agent applies what the hub rendered, and writes the status")
	hook := &webhookSink{}
	hookSrv := httptest.NewServer(hook)
	t.Cleanup(hookSrv.Close)
	g.Expect(hub.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "holdfast-system", Name: "hello-hook"},
		StringData: map[string]string{notify.SecretKeyURL: hookSrv.URL + "/holdfast"}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "holdfast-system", Name: "hello"},
		Spec: holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
			Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello, namespace: apps}\ndata: {cluster: '{{ .Cluster.Name }}'}\n"}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"mode": "pull"}}},
			SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
			Drift:           &holdfastv1.DriftPolicy{Attribution: holdfastv1.AttributionAuto},
			Services:        []holdfastv1.Service{{Name: "hello", Namespace: "apps", Template: holdfastv1.TemplateReference{Namespace: "holdfast-system", Name: "hello"}}},
			Notifications: []holdfastv1.NotificationTarget{{Name: "audit", Type: holdfastv1.NotificationWebhook,
				SecretRef: holdfastv1.SecretReference{Namespace: "holdfast-system", Name: "hello-hook"}}},
		}})).To(Succeed())
	statusKey := client.ObjectKey{Namespace: ns, Name: naming.StatusName("hello", "edge")}
	status := func(g Gomega) *holdfastv1.ClusterServiceStatus {
		css := &holdfastv1.ClusterServiceStatus{}
		g.Expect(hub.Get(ctx, statusKey, css)).To(Succeed())
		return css
	}
	// onEdge reads ConfigMap apps/name on the Pull cluster; setOnEdge sets its key to value
	// there, as c with field owner owner.
	onEdge := func(g Gomega, name string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{}
		g.Expect(edgeClient.Get(ctx, client.ObjectKey{Namespace: "apps", Name: name}, cm)).To(Succeed())
		return cm
	}
	setOnEdge := func(c client.Client, owner, name, key, value string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			cm := onEdge(g, name)
			cm.Data[key] = value
			g.Expect(c.Update(ctx, cm, client.FieldOwner(owner))).To(Succeed())
		}).WithTimeout(30 * time.Second).Should(Succeed())
	}
	helloOnEdge := func(g Gomega) *corev1.ConfigMap { return onEdge(g, "hello") }
	g.Eventually(func(g Gomega) {
		g.Expect(helloOnEdge(g).Data).To(HaveKeyWithValue("cluster", "edge"))
		css := status(g)
		g.Expect(conditions.IsTrue(css, holdfastv1.ReadyCondition)).To(BeTrue(), "%+v", css.Status.Conditions)
		g.Expect(css.Status.Resources).To(ContainElement(HaveField("Name", "hello")))
		g.Expect(conditions.IsTrue(css, holdfastv1.AttributionCondition)).To(BeTrue(), "the agent applies the attribution policy on its cluster")
	}).WithTimeout(60 * time.Second).Should(Succeed())

	aliceCfg := rest.CopyConfig(edge.RESTConfig())
	aliceCfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", Groups: []string{"system:masters"}}
	alice, err := client.New(aliceCfg, client.Options{Scheme: hub.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	edit := func(value string) { t.Helper(); setOnEdge(alice, "kubectl-edit", "hello", "cluster", value) }
	putBack := func(why string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			g.Expect(helloOnEdge(g).Data).To(HaveKeyWithValue("cluster", "edge"))
		}).WithTimeout(30*time.Second).Should(Succeed(), why)
	}
	recorded := func(value, why string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			g.Expect(status(g).Status.Drifts).To(ContainElement(And(HaveField("Name", "hello"), HaveField("User", "alice"),
				HaveField("Manager", "kubectl-edit"), HaveField("CorrectedTime", Not(BeNil())),
				HaveField("Fields", ContainElement(HaveField("New", ContainSubstring(value)))))))
		}).WithTimeout(60*time.Second).Should(Succeed(), why)
		// The hub notifies of what the agent recorded.
		g.Eventually(func(g Gomega) {
			g.Expect(hook.corrected(g, value)).To(BeNumerically(">=", 1), "notifications of the correction of %s", value)
		}).WithTimeout(30*time.Second).Should(Succeed(), why)
	}

	t.Log("alice edits it on the Pull cluster: put back, and recorded on the hub with her name")
	// The API server applies the attribution policy once it has loaded it: until then an edit is
	// put back unattributed.
	g.Eventually(func(g Gomega) {
		edit("alice-1")
		putBack("alice's edit")
		for _, d := range status(g).Status.Drifts {
			if d.User == "alice" {
				return
			}
		}
		g.Expect(false).To(BeTrue(), "no drift recorded with alice's name yet")
	}).WithTimeout(90 * time.Second).Should(Succeed())
	recorded("alice-1", "alice's edit recorded on the hub")

	t.Log("The hub's API server stopped: alice's next edit is still put back, and recorded once it is back")
	g.Expect(hubPlane.StopAPIServer()).To(Succeed())
	edit("alice-2")
	putBack("alice's edit while the hub is away")

	t.Log("The agent restarted while the hub is away: it starts from what it kept, the record of alice's edit among it, and puts alice's next edit back")
	f.restartAgent()
	edit("alice-3")
	putBack("alice's edit after the agent restarted with the hub away")
	g.Expect(hubPlane.StartAPIServer(ctx)).To(Succeed())
	recorded("alice-2", "the record of the edit made while the hub was away, before the agent restarted: kept on the agent's cluster")
	recorded("alice-3", "the record of the edit made while the hub was away, by the restarted agent")
	g.Consistently(func(g Gomega) {
		g.Expect(hook.corrected(g, "alice-3")).To(Equal(1))
	}).WithTimeout(3*time.Second).Should(Succeed(), "one edit, one notification")

	t.Log("Another manager keeps reverting an object of a second service set: the agent gives it up as Contested, and the hub notifies of it once")
	g.Expect(hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "holdfast-system", Name: "fought"},
		Spec: holdfastv1.ServiceTemplateSpec{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fought, namespace: apps}\ndata: {owner: holdfast}\n"}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "fought"},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"mode": "pull"}}},
			SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
			Drift: &holdfastv1.DriftPolicy{Fight: &holdfastv1.FightPolicy{MaxCorrections: 2, Window: &metav1.Duration{Duration: 5 * time.Minute},
				Action: holdfastv1.FightStop}},
			Services: []holdfastv1.Service{{Name: "fought", Namespace: "apps", Template: holdfastv1.TemplateReference{Namespace: "holdfast-system", Name: "fought"}}},
			Notifications: []holdfastv1.NotificationTarget{{Name: "audit", Type: holdfastv1.NotificationWebhook,
				SecretRef: holdfastv1.SecretReference{Namespace: "holdfast-system", Name: "hello-hook"}}},
		}})).To(Succeed())
	foughtOwner := func(g Gomega) string { return onEdge(g, "fought").Data["owner"] }
	g.Eventually(func(g Gomega) { g.Expect(foughtOwner(g)).To(Equal("holdfast")) }).WithTimeout(60 * time.Second).Should(Succeed())
	revert := func(round int) {
		t.Helper()
		setOnEdge(edgeClient, "other-controller", "fought", "owner", fmt.Sprintf("theirs-%d", round))
	}
	for round := 1; round <= 2; round++ {
		revert(round)
		g.Eventually(func(g Gomega) { g.Expect(foughtOwner(g)).To(Equal("holdfast")) }).WithTimeout(30*time.Second).Should(Succeed(), "round %d put back", round)
	}
	revert(3)
	g.Eventually(func(g Gomega) {
		css := &holdfastv1.ClusterServiceStatus{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.StatusName("fought", "edge")}, css)).To(Succeed())
		g.Expect(css.Status.Resources).To(ContainElement(And(HaveField("Name", "fought"), HaveField("State", holdfastv1.ResourceContested))))
	}).WithTimeout(60 * time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(hook.count(g, notify.Contested, "fought")).To(Equal(1))
	}).WithTimeout(30*time.Second).Should(Succeed(), "the hub notifies that the Pull cluster's object is Contested")
	g.Consistently(func(g Gomega) {
		g.Expect(hook.count(g, notify.Contested, "fought")).To(Equal(1))
	}).WithTimeout(3*time.Second).Should(Succeed(), "once")
	g.Expect(foughtOwner(g)).To(Equal("theirs-3"), "a Contested object with the fight action Stop is left as the other manager made it")

	t.Log("holdfast correct asks for it on the Pull cluster: the agent puts it back, and the hub notifies that it is Resumed")
	fought := &holdfastv1.ClusterServiceStatus{}
	g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.StatusName("fought", "edge")}, fought)).To(Succeed())
	_, err = fleetview.RequestReconcile(ctx, hub, fought)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) { g.Expect(foughtOwner(g)).To(Equal("holdfast")) }).WithTimeout(30*time.Second).Should(Succeed(), "put back on request")
	g.Eventually(func(g Gomega) {
		g.Expect(hook.count(g, notify.Resumed, "fought")).To(Equal(1))
	}).WithTimeout(30*time.Second).Should(Succeed(), "the hub notifies that the correction of the Contested object resumed")

	t.Log("holdfast correct on the whole service set reaches the Pull cluster: its agent handles the request")
	helloSet := &holdfastv1.MultiClusterService{}
	g.Expect(hub.Get(ctx, client.ObjectKey{Name: "hello"}, helloSet)).To(Succeed())
	token, err := fleetview.RequestReconcile(ctx, hub, helloSet)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		handled := status(g).Status.HandledRequests
		g.Expect(handled).NotTo(BeNil())
		g.Expect(handled.ServiceSet).To(Equal(token))
	}).WithTimeout(30*time.Second).Should(Succeed(), "the service set's request handled by the Pull cluster's agent")

	t.Log("The service set paused: the agent changes nothing on its cluster, an edit stays; resumed, it is put back")
	setPaused := func(paused bool) {
		t.Helper()
		_, err := fleetview.SetPaused(ctx, hub, "hello", paused)
		g.Expect(err).NotTo(HaveOccurred())
	}
	setPaused(true)
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(status(g), holdfastv1.PausedCondition)).To(BeTrue())
	}).WithTimeout(30*time.Second).Should(Succeed(), "the Pull cluster's status object says it is paused")
	edit("while-paused")
	g.Consistently(func(g Gomega) {
		g.Expect(helloOnEdge(g).Data).To(HaveKeyWithValue("cluster", "while-paused"))
	}).WithTimeout(3*time.Second).Should(Succeed(), "an edit of a paused service set's object is left alone")
	setPaused(false)
	putBack("the edit made while paused, once resumed")

	t.Log("The service set deleted: the agent withdraws what it applied, and the hub lets the status object go")
	g.Expect(hub.Delete(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "hello"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := edgeClient.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "hello"}, &corev1.ConfigMap{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "hello still on the cluster: %v", err)
		err = hub.Get(ctx, statusKey, &holdfastv1.ClusterServiceStatus{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the status object is still there: %v", err)
	}).WithTimeout(90 * time.Second).Should(Succeed())
}

// webhookSink is a notification webhook that keeps what it receives.
type webhookSink struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (w *webhookSink) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	w.bodies = append(w.bodies, body)
	w.mu.Unlock()
	rw.WriteHeader(http.StatusNoContent)
}

// corrected is how many DriftCorrected notifications it received of alice's edit to value on the
// Pull cluster edge.
func (w *webhookSink) corrected(g Gomega, value string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, body := range w.bodies {
		var e struct {
			Type    string `json:"type"`
			Cluster struct{ Name string }
			Drift   struct {
				User   string
				Fields []struct{ New string }
			}
		}
		g.Expect(json.Unmarshal(body, &e)).To(Succeed())
		if e.Type == string(notify.DriftCorrected) && e.Cluster.Name == "edge" && e.Drift.User == "alice" &&
			len(e.Drift.Fields) > 0 && strings.Contains(e.Drift.Fields[0].New, value) {
			n++
		}
	}
	return n
}

// count is how many notifications of type typ it received about the object named object.
func (w *webhookSink) count(g Gomega, typ notify.EventType, object string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, body := range w.bodies {
		var e struct {
			Type   string `json:"type"`
			Object struct{ Name string }
		}
		g.Expect(json.Unmarshal(body, &e)).To(Succeed())
		if e.Type == string(typ) && e.Object.Name == object {
			n++
		}
	}
	return n
}

// pullFleet is a hub whose controller runs with the chart's rights, and a Pull cluster "edge"
// (a control plane of its own, with the labels mode=pull and wave=1) registered with `holdfast
// cluster add --pull`, its manifests applied and its agent running.
type pullFleet struct {
	hubPlane, edge  *sandbox.ControlPlane
	hub, edgeClient client.Client
	// ns is the Pull cluster's namespace on the hub.
	ns string
	// stopAgent stops the agent; restartAgent stops it and starts another.
	stopAgent, restartAgent func()
}

func startPullFleet(t *testing.T) *pullFleet {
	t.Helper()
	hubPlane, hub, cli := startHubController(t)
	ctx := t.Context()
	g := NewWithT(t)
	export := filepath.Join(t.TempDir(), "edge.yaml")
	g.Expect(cli.run(t, "cluster", "add", "--pull", "edge", "--labels", "mode=pull,wave=1", "--export", export)).To(ContainSubstring("added in Pull mode"))
	ns := onboard.PullNamespace("edge")
	edge, err := sandbox.Start(ctx, sandbox.Options{Name: "edge"})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = edge.Stop() })
	edgeClient, err := client.New(edge.RESTConfig(), client.Options{Scheme: hub.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	applyManifests(t, edgeClient, export)
	key := types.NamespacedName{Namespace: ns, Name: "edge"}
	f := &pullFleet{hubPlane: hubPlane, edge: edge, hub: hub, edgeClient: edgeClient, ns: ns}
	f.stopAgent = runAgent(t, edge.RESTConfig(), key)
	f.restartAgent = func() {
		f.stopAgent()
		f.stopAgent = runAgent(t, edge.RESTConfig(), key)
	}
	return f
}

// agentOptions are the options of an agent of the fleet's Pull cluster reaching its own cluster
// through own, with the per-cluster reconcile's options c (runAgentOptions).
func (f *pullFleet) agentOptions(t *testing.T, own *rest.Config, c controller.Options) agent.Options {
	t.Helper()
	scheme, err := controller.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	return agent.Options{Cluster: types.NamespacedName{Namespace: f.ns, Name: "edge"}, Own: own, Scheme: scheme,
		Version: testVersion, Heartbeat: 500 * time.Millisecond,
		HubSecret:  types.NamespacedName{Namespace: onboard.Namespace, Name: onboard.AgentHubSecret},
		Controller: c}
}

// deployInline creates a ServiceTemplate name of the inline manifests and a MultiClusterService
// name deploying it (service name, namespace apps) with drift detection to the fleet's Pull
// cluster, and returns the key of its status object there.
func (f *pullFleet) deployInline(t *testing.T, name, inline string) client.ObjectKey {
	t.Helper()
	ctx, g := t.Context(), NewWithT(t)
	g.Expect(f.hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "holdfast-system", Name: name},
		Spec: holdfastv1.ServiceTemplateSpec{Inline: inline}})).To(Succeed())
	g.Expect(f.hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"mode": "pull"}}},
			SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
			Services:        []holdfastv1.Service{{Name: name, Namespace: "apps", Template: holdfastv1.TemplateReference{Namespace: "holdfast-system", Name: name}}},
		}})).To(Succeed())
	return client.ObjectKey{Namespace: f.ns, Name: naming.StatusName(name, "edge")}
}

// rollout is status.rollout of the fleet's MultiClusterService name, which must have one.
func (f *pullFleet) rollout(ctx context.Context, g Gomega, name string) *holdfastv1.RolloutStatus {
	m := &holdfastv1.MultiClusterService{}
	g.Expect(f.hub.Get(ctx, client.ObjectKey{Name: name}, m)).To(Succeed())
	g.Expect(m.Status.Rollout).NotTo(BeNil())
	return m.Status.Rollout
}

// updateServiceSet changes the fleet's MultiClusterService name with change, read anew and
// tried again on a conflict.
func (f *pullFleet) updateServiceSet(t *testing.T, name string, change func(*holdfastv1.MultiClusterService)) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		m := &holdfastv1.MultiClusterService{}
		g.Expect(f.hub.Get(t.Context(), client.ObjectKey{Name: name}, m)).To(Succeed())
		change(m)
		g.Expect(f.hub.Update(t.Context(), m)).To(Succeed())
	}).WithTimeout(30 * time.Second).Should(Succeed())
}

// addPushCluster registers the hub's own API server as a Push cluster, "near" (labelled
// labels), beside the fleet's Pull cluster "edge", and returns a client of each by name.
func (f *pullFleet) addPushCluster(t *testing.T, labels map[string]string) map[string]client.Client {
	t.Helper()
	ctx, g := t.Context(), NewWithT(t)
	g.Expect(f.hub.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "holdfast-system", Name: "near-kubeconfig"},
		Data: map[string][]byte{"value": f.hubPlane.Kubeconfig()}})).To(Succeed())
	g.Expect(f.hub.Create(ctx, &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "holdfast-system", Name: "near", Labels: labels},
		Spec: holdfastv1.ClusterSpec{KubeconfigSecretRef: holdfastv1.SecretKeyReference{Name: "near-kubeconfig", Key: "value"}}})).To(Succeed())
	return map[string]client.Client{"edge": f.edgeClient, "near": f.hub}
}

// TestRolloutAcrossPushAndPullClusters: one service set selects a Pull cluster (wave 1) and a
// Push cluster (wave 2, the hub's own API server registered with its kubeconfig). A new
// revision reaches the Pull cluster first and the Push cluster after it; a revision that fails
// its health check on the Pull cluster, as its agent reports it, halts the rollout there, and
// the Push cluster keeps the revision before.
func TestRolloutAcrossPushAndPullClusters(t *testing.T) {
	f := startPullFleet(t)
	ctx, g, hub := t.Context(), NewWithT(t), f.hub
	targets := f.addPushCluster(t, map[string]string{"mode": "push", "wave": "2"})
	revisionOn := func(cluster string) string {
		cm := &corev1.ConfigMap{}
		if err := targets[cluster].Get(ctx, client.ObjectKey{Namespace: cluster, Name: "app"}, cm); err != nil {
			return ""
		}
		return cm.Data["rev"]
	}
	manifests := func(rev, ok string) string {
		return "apiVersion: v1\nkind: Namespace\nmetadata: {name: '{{ .Cluster.Name }}'}\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: '{{ .Cluster.Name }}'}\ndata: {rev: '" + rev + "', ok: '" + ok + "'}\n"
	}
	tplKey := client.ObjectKey{Namespace: "holdfast-system", Name: "app"}
	g.Expect(hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: tplKey.Namespace, Name: tplKey.Name},
		Spec: holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: manifests("1", "true")}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "mode", Operator: metav1.LabelSelectorOpIn, Values: []string{"pull", "push"}}}}},
			SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
			Services: []holdfastv1.Service{{Name: "app", Template: holdfastv1.TemplateReference{Namespace: tplKey.Namespace, Name: tplKey.Name},
				// An override for the Pull cluster only, which the hub applies when it renders for it.
				Overrides: []holdfastv1.ServiceOverride{{Name: "pull-only",
					ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"mode": "pull"}},
					Patches:         []holdfastv1.OverridePatch{{Patch: "- {op: add, path: /data/via, value: agent}\n", Target: &holdfastv1.PatchTarget{Kind: "ConfigMap", Name: "app"}}}}}}},
			HealthChecks: []holdfastv1.HealthCheck{{Kind: "ConfigMap", Expr: "true", Failed: "has(self.data) && has(self.data.ok) && self.data.ok == 'false'"}},
			Rollout:      &holdfastv1.RolloutStrategy{WaveLabel: "wave", PauseBetweenWaves: &metav1.Duration{Duration: time.Second}},
		}})).To(Succeed())
	rollout := func(g Gomega) *holdfastv1.RolloutStatus { return f.rollout(ctx, g, "app") }
	setRevision := func(rev, ok string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			tpl := &holdfastv1.ServiceTemplate{}
			g.Expect(hub.Get(ctx, tplKey, tpl)).To(Succeed())
			tpl.Spec.Inline = manifests(rev, ok)
			g.Expect(hub.Update(ctx, tpl)).To(Succeed())
		}).WithTimeout(30 * time.Second).Should(Succeed())
	}

	t.Log("Revision 1 reaches both, with the Pull cluster's override on the Pull cluster only, named in its status")
	g.Eventually(func(g Gomega) {
		g.Expect(revisionOn("edge")).To(Equal("1"))
		g.Expect(revisionOn("near")).To(Equal("1"))
		g.Expect(rollout(g).Phase).To(Equal(holdfastv1.RolloutComplete))
	}).WithTimeout(90 * time.Second).Should(Succeed())
	via := func(cluster string) string {
		cm := &corev1.ConfigMap{}
		g.Expect(targets[cluster].Get(ctx, client.ObjectKey{Namespace: cluster, Name: "app"}, cm)).To(Succeed())
		return cm.Data["via"]
	}
	g.Expect(via("edge")).To(Equal("agent"))
	g.Expect(via("near")).To(BeEmpty())
	overridesOn := func(g Gomega, ns, cluster string) []string {
		css := &holdfastv1.ClusterServiceStatus{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.StatusName("app", cluster)}, css)).To(Succeed())
		g.Expect(css.Status.Services).To(HaveLen(1))
		return css.Status.Services[0].Overrides
	}
	g.Eventually(func(g Gomega) []string { return overridesOn(g, f.ns, "edge") }).WithTimeout(30 * time.Second).Should(Equal([]string{"pull-only"}))
	g.Expect(overridesOn(g, "holdfast-system", "near")).To(BeEmpty())

	t.Log("Revision 2: the Pull cluster (wave 1) first, then the Push cluster (wave 2)")
	var edgeAt, nearAt time.Time
	setRevision("2", "true")
	g.Eventually(func(g Gomega) {
		now := time.Now()
		if edgeAt.IsZero() && revisionOn("edge") == "2" {
			edgeAt = now
		}
		if nearAt.IsZero() && revisionOn("near") == "2" {
			nearAt = now
		}
		g.Expect(edgeAt.IsZero() || nearAt.IsZero()).To(BeFalse(), "revision 2 not everywhere yet")
	}).WithTimeout(90 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	g.Expect(edgeAt.Before(nearAt)).To(BeTrue(), "the Pull cluster got revision 2 at %s, the Push cluster at %s", edgeAt.Format("15:04:05.000"), nearAt.Format("15:04:05.000"))
	g.Eventually(func(g Gomega) { g.Expect(rollout(g).Phase).To(Equal(holdfastv1.RolloutComplete)) }).WithTimeout(60 * time.Second).Should(Succeed())

	t.Log("Revision 3 fails its health check on the Pull cluster: the rollout halts there, the Push cluster keeps revision 2")
	setRevision("3", "false")
	g.Eventually(func(g Gomega) {
		r := rollout(g)
		g.Expect(r.Phase).To(Equal(holdfastv1.RolloutHalted))
		g.Expect(r.FailedClusters).To(ContainElement(HaveField("Cluster", f.ns+"/edge")))
	}).WithTimeout(90 * time.Second).Should(Succeed())
	g.Expect(revisionOn("edge")).To(Equal("3"))
	g.Consistently(func() string { return revisionOn("near") }).WithTimeout(3*time.Second).Should(Equal("2"), "the Push cluster, in the wave after the halt")
}

// TestPullAgentWithALongerHeartbeatStaysConnected: an agent renewing its Lease less often than
// the hub's connection grace (here every 4 s against 3 s) claims three heartbeats in its Lease,
// and the hub honours that: its Cluster stays Connected between renewals instead of flapping to
// AgentNotReporting; stopped, it is not reporting once that duration is over.
func TestPullAgentWithALongerHeartbeatStaysConnected(t *testing.T) {
	f := startPullFleet(t)
	ctx, g := t.Context(), NewWithT(t)
	key := types.NamespacedName{Namespace: f.ns, Name: "edge"}
	connected := func(g Gomega) *metav1.Condition {
		c := &holdfastv1.Cluster{}
		g.Expect(f.hub.Get(ctx, key, c)).To(Succeed())
		cond := conditions.Get(c, holdfastv1.ClusterConnectedCondition)
		g.Expect(cond).NotTo(BeNil())
		return cond
	}
	isConnected := func(g Gomega) { g.Expect(connected(g).Status).To(Equal(metav1.ConditionTrue)) }
	g.Eventually(isConnected).WithTimeout(60 * time.Second).Should(Succeed())
	f.stopAgent()
	stop := runAgentWith(t, f.edge.RESTConfig(), key, testVersion, 4*time.Second)
	// Once the new agent's Lease claims 12 s: the one before claimed 1 s.
	g.Eventually(func(g Gomega) {
		lease := &coordinationv1.Lease{}
		g.Expect(f.hub.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: agentaccess.LeaseName}, lease)).To(Succeed())
		g.Expect(lease.Spec.LeaseDurationSeconds).To(HaveValue(BeEquivalentTo(12)))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	g.Eventually(isConnected).WithTimeout(30 * time.Second).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(connected(g).Status).To(Equal(metav1.ConditionTrue), "between two renewals 4 s apart")
	}).WithTimeout(10 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())

	t.Log("The agent stopped: not reporting once the 12 s its Lease claims are over")
	stop()
	g.Eventually(func(g Gomega) {
		g.Expect(connected(g).Reason).To(Equal(holdfastv1.AgentNotReportingReason))
	}).WithTimeout(30 * time.Second).Should(Succeed())
}

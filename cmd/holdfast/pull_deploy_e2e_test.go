package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/onboard"
	"holdfast.dev/holdfast/internal/sandbox"
)

// TestPullClusterIsDeployedAndCorrectedByItsAgent: a Pull cluster the hub cannot reach (the
// hub's controller has no kubeconfig of it, and runs with the chart's rights) receives a
// service set's services through its agent; alice's edit of a deployed object is put back by
// the agent and recorded on the hub with her name; with the hub's API server stopped, her next
// edit is still put back, and its record reaches the hub once the API server is back; the
// status object deleted on the hub, the agent withdraws what it applied.
func TestPullClusterIsDeployedAndCorrectedByItsAgent(t *testing.T) {
	hubPlane, hub := startHub(t)
	ctx := t.Context()
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(path, hubPlane.Kubeconfig(), 0o600)).To(Succeed())
	cli := &cliRunner{kubeconfig: path}
	mgr, _, err := controller.NewManager(ctx, asController(t, hub, hubPlane.RESTConfig()), controller.Options{MetricsAddr: "0", HealthAddr: "0", SkipNameValidation: true,
		ProbeInterval: 500 * time.Millisecond, ConnectionGrace: 3 * time.Second})
	g.Expect(err).NotTo(HaveOccurred())
	go func() { _ = mgr.Start(ctx) }()

	export := filepath.Join(t.TempDir(), "edge.yaml")
	g.Expect(cli.run(t, "cluster", "add", "--pull", "edge", "--labels", "mode=pull", "--export", export)).To(ContainSubstring("added in Pull mode"))
	ns := onboard.PullNamespace("edge")
	edge, err := sandbox.Start(ctx, sandbox.Options{Name: "edge"})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = edge.Stop() })
	edgeClient, err := client.New(edge.RESTConfig(), client.Options{Scheme: hub.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	applyManifests(t, edgeClient, export)
	runAgent(t, edge.RESTConfig(), types.NamespacedName{Namespace: ns, Name: "edge"})

	t.Log("A service set selecting the Pull cluster: its agent applies what the hub rendered, and writes the status")
	g.Expect(hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "holdfast-system", Name: "hello"},
		Spec: holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
			Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello, namespace: apps}\ndata: {cluster: '{{ .Cluster.Name }}'}\n"}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"mode": "pull"}}},
			SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
			Drift:           &holdfastv1.DriftPolicy{Attribution: holdfastv1.AttributionAuto},
			Services:        []holdfastv1.Service{{Name: "hello", Namespace: "apps", Template: holdfastv1.TemplateReference{Namespace: "holdfast-system", Name: "hello"}}},
		}})).To(Succeed())
	statusKey := client.ObjectKey{Namespace: ns, Name: naming.StatusName("hello", "edge")}
	status := func(g Gomega) *holdfastv1.ClusterServiceStatus {
		css := &holdfastv1.ClusterServiceStatus{}
		g.Expect(hub.Get(ctx, statusKey, css)).To(Succeed())
		return css
	}
	helloOnEdge := func(g Gomega) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{}
		g.Expect(edgeClient.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "hello"}, cm)).To(Succeed())
		return cm
	}
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
	edit := func(value string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			cm := helloOnEdge(g)
			cm.Data["cluster"] = value
			g.Expect(alice.Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())
		}).WithTimeout(30 * time.Second).Should(Succeed())
	}
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
	g.Expect(hubPlane.StartAPIServer(ctx)).To(Succeed())
	recorded("alice-2", "the record of the edit made while the hub was away")

	t.Log("The service set deleted: the agent withdraws what it applied, and the hub lets the status object go")
	g.Expect(hub.Delete(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "hello"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := edgeClient.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "hello"}, &corev1.ConfigMap{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "hello still on the cluster: %v", err)
		err = hub.Get(ctx, statusKey, &holdfastv1.ClusterServiceStatus{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the status object is still there: %v", err)
	}).WithTimeout(90 * time.Second).Should(Succeed())
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/agent"
	"holdfast.dev/holdfast/internal/agentaccess"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/controller/clusterservicestatus"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/onboard"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/work"
)

// TestPullClusterAccess: `holdfast cluster add --pull` registers two clusters the hub cannot
// reach and writes what to apply on each, with a bootstrap token. On edge-1 (a control plane of
// its own) the manifests are applied and the agent runs: it trades the bootstrap token for its own, which ends the bootstrap token, and
// its Lease makes its Cluster Connected with the cluster's identity; stopped, it is not
// reporting, and started again it reports with the token it kept. Its token reads its own
// Cluster's namespace and is refused the other cluster's declarations and statuses, the hub's
// Secrets and the Clusters; the hub publishes each cluster's rendered services where only its
// agent reads them; `holdfast cluster revoke` ends its token at once; a second Cluster in a
// namespace withdraws its agent's access; deleting the Cluster removes its identity. The
// controller runs with the chart's generated rights.
func TestPullClusterAccess(t *testing.T) {
	_, hub, cli := startHubController(t)
	ctx := t.Context()
	g := NewWithT(t)

	agents, exports := map[string]*rest.Config{}, map[string]string{}
	for _, name := range []string{"edge-1", "edge-2"} {
		export := filepath.Join(t.TempDir(), name+".yaml")
		g.Expect(cli.run(t, "cluster", "add", "--pull", name, "--labels", "site="+name+",mode=pull", "--export", export)).To(ContainSubstring("added in Pull mode"))
		info, err := os.Stat(export)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o600)), "the manifests hold a bootstrap token")
		agents[name], exports[name] = agentHubConfig(t, export), export
	}
	ns1, ns2 := onboard.PullNamespace("edge-1"), onboard.PullNamespace("edge-2")
	cluster := func(g Gomega, ns, name string) *holdfastv1.Cluster {
		c := &holdfastv1.Cluster{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
		return c
	}
	c1 := cluster(g, ns1, "edge-1")
	g.Expect(c1.Pull()).To(BeTrue())
	g.Expect(c1.Spec.KubeconfigSecretRef.Name).To(BeEmpty(), "the hub holds no kubeconfig of a Pull cluster")
	notReporting := func(why string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			c := conditions.Get(cluster(g, ns1, "edge-1"), holdfastv1.ClusterConnectedCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(holdfastv1.AgentNotReportingReason))
		}).WithTimeout(30*time.Second).Should(Succeed(), why)
	}
	notReporting("no agent yet")

	t.Log("edge-1's manifests applied on it, its agent trades the bootstrap token for its own and reports")
	edge, err := sandbox.Start(ctx, sandbox.Options{Name: "edge-1"})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = edge.Stop() })
	edgeClient, err := client.New(edge.RESTConfig(), client.Options{Scheme: hub.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	applyManifests(t, edgeClient, exports["edge-1"])
	stop := runAgent(t, edge.RESTConfig(), types.NamespacedName{Namespace: ns1, Name: "edge-1"})
	kubeSystem := &corev1.Namespace{}
	g.Expect(edgeClient.Get(ctx, client.ObjectKey{Name: "kube-system"}, kubeSystem)).To(Succeed())
	reporting := func(why string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			cl := cluster(g, ns1, "edge-1")
			g.Expect(conditions.IsTrue(cl, holdfastv1.ClusterConnectedCondition)).To(BeTrue(), "%+v", cl.Status.Conditions)
			g.Expect(cl.Status.Version).To(HavePrefix("v1."))
			g.Expect(cl.Status.ClusterID).To(Equal(string(kubeSystem.UID)), "the identity of the cluster the agent runs in")
		}).WithTimeout(30*time.Second).Should(Succeed(), why)
	}
	reporting("the agent reports")
	bootstrap := agents["edge-1"]
	g.Eventually(func() bool { return refused(ctx, bootstrap, ns1) }).WithTimeout(30*time.Second).Should(BeTrue(), "the bootstrap token still works")
	own := keptToken(t, edgeClient, bootstrap)

	t.Log("Its own token: its namespace only")
	c, err := client.New(own, client.Options{Scheme: hub.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.List(ctx, &holdfastv1.ClusterServiceStatusList{}, client.InNamespace(ns1))).To(Succeed())
	g.Expect(c.List(ctx, &corev1.SecretList{}, client.InNamespace(ns1))).To(Succeed())
	for what, err := range map[string]error{
		"the other cluster's statuses": c.List(ctx, &holdfastv1.ClusterServiceStatusList{}, client.InNamespace(ns2)),
		"the other cluster's work":     c.List(ctx, &corev1.SecretList{}, client.InNamespace(ns2)),
		"the other cluster's status":   c.Get(ctx, client.ObjectKey{Namespace: ns2, Name: "x"}, &holdfastv1.ClusterServiceStatus{}),
		"the hub's Secrets":            c.List(ctx, &corev1.SecretList{}, client.InNamespace("holdfast-system")),
		"the Clusters":                 c.List(ctx, &holdfastv1.ClusterList{}),
		"the service sets":             c.List(ctx, &holdfastv1.MultiClusterServiceList{}),
		"its own Cluster":              c.Get(ctx, client.ObjectKeyFromObject(c1), &holdfastv1.Cluster{}),
		"the other agent's Lease":      c.Create(ctx, agentLease(ns2, "edge-2")),
		"a token of the other agent":   tokenFor(ctx, own, ns2),
		"writing a status object":      c.Create(ctx, &holdfastv1.ClusterServiceStatus{ObjectMeta: metav1.ObjectMeta{Namespace: ns1, Name: "forged"}}),
	} {
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", what, err)
	}

	t.Log("The agent stopped: not reporting after the grace; started again, it reports with the token it kept")
	stop()
	notReporting("the agent stopped")
	connectedSays := func(status metav1.ConditionStatus, reason, message string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			c := conditions.Get(cluster(g, ns1, "edge-1"), holdfastv1.ClusterConnectedCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(status), "%s: %s", c.Reason, c.Message)
			g.Expect(c.Reason).To(Equal(reason), c.Message)
			g.Expect(c.Message).To(ContainSubstring(message))
		}).WithTimeout(30 * time.Second).Should(Succeed())
	}
	t.Log("Version skew: an agent one minor version behind the hub is supported, and the Cluster says so; two behind is not")
	stop = runAgentOf(t, edge.RESTConfig(), types.NamespacedName{Namespace: ns1, Name: "edge-1"}, "v0.3.2")
	connectedSays(metav1.ConditionTrue, holdfastv1.ConnectedReason, "one minor version behind")
	stop()
	stop = runAgentOf(t, edge.RESTConfig(), types.NamespacedName{Namespace: ns1, Name: "edge-1"}, "v0.2.0")
	connectedSays(metav1.ConditionFalse, holdfastv1.AgentVersionUnsupportedReason, "upgrade the agent")
	stop()
	stop = runAgent(t, edge.RESTConfig(), types.NamespacedName{Namespace: ns1, Name: "edge-1"})
	reporting("the agent restarted, without a bootstrap token")

	t.Log("A service set selecting both: the hub renders for each and publishes the work where only its agent reads it")
	g.Expect(hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "holdfast-system", Name: "hello"},
		Spec: holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
			Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello, namespace: apps}\ndata: {site: '{{ index .Cluster.Labels \"site\" }}'}\n"}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"mode": "pull"}}},
			Services:        []holdfastv1.Service{{Name: "hello", Namespace: "apps", Template: holdfastv1.TemplateReference{Namespace: "holdfast-system", Name: "hello"}}},
		}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		w := readWork(ctx, g, c, ns1, naming.StatusName("hello", "edge-1"))
		g.Expect(w.ServiceSet).To(Equal("hello"))
		g.Expect(w.Spec.ClusterSelector.MatchLabels).To(BeEmpty(), "which clusters a service set selects stays on the hub")
		g.Expect(w.Services).To(HaveLen(1))
		g.Expect(w.Services[0].Objects).To(HaveLen(1))
		g.Expect(w.Services[0].Objects[0].Object["data"]).To(HaveKeyWithValue("site", "edge-1"), "rendered for its cluster")
	}).WithTimeout(30 * time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) {
		list := &corev1.SecretList{}
		g.Expect(hub.List(ctx, list, client.InNamespace(ns2), client.MatchingLabels{work.StatusLabel: naming.StatusName("hello", "edge-2")})).To(Succeed())
		g.Expect(list.Items).NotTo(BeEmpty(), "edge-2's work, beside edge-1's")
	}).WithTimeout(30 * time.Second).Should(Succeed())

	t.Log("The template changes: a new work, and the older one deleted")
	tpl := &holdfastv1.ServiceTemplate{}
	g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: "holdfast-system", Name: "hello"}, tpl)).To(Succeed())
	tpl.Spec.Inline = strings.Replace(tpl.Spec.Inline, "site:", "where:", 1)
	g.Expect(hub.Update(ctx, tpl)).To(Succeed())
	g.Eventually(func(g Gomega) {
		w := readWork(ctx, g, c, ns1, naming.StatusName("hello", "edge-1"))
		g.Expect(w.Services[0].Objects[0].Object["data"]).To(HaveKeyWithValue("where", "edge-1"))
		css := &holdfastv1.ClusterServiceStatus{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns1, Name: naming.StatusName("hello", "edge-1")}, css)).To(Succeed())
		list := &corev1.SecretList{}
		g.Expect(hub.List(ctx, list, client.InNamespace(ns1), client.MatchingLabels{work.StatusLabel: css.Name})).To(Succeed())
		for _, p := range list.Items {
			g.Expect(p.Annotations[work.DigestAnnotation]).To(Equal(css.Annotations[clusterservicestatus.WorkAnnotation]), "an older work left: %s", p.Name)
		}
	}).WithTimeout(30 * time.Second).Should(Succeed())

	t.Log("holdfast cluster revoke ends its token at once; the Cluster gets a new identity")
	sa := &corev1.ServiceAccount{}
	g.Expect(hub.Get(ctx, types.NamespacedName{Namespace: ns1, Name: agentaccess.ServiceAccountName}, sa)).To(Succeed())
	g.Expect(cli.run(t, "cluster", "revoke", "edge-1")).To(ContainSubstring("revoked"))
	g.Eventually(func() bool { return refused(ctx, own, ns1) }).WithTimeout(30*time.Second).Should(BeTrue(), "the revoked token still works")
	notReporting("the agent revoked")
	stop()
	g.Eventually(func(g Gomega) {
		now := &corev1.ServiceAccount{}
		g.Expect(hub.Get(ctx, types.NamespacedName{Namespace: ns1, Name: agentaccess.ServiceAccountName}, now)).To(Succeed())
		g.Expect(now.UID).NotTo(Equal(sa.UID))
	}).WithTimeout(30 * time.Second).Should(Succeed())

	t.Log("A second Cluster in edge-2's namespace: edge-2's agent loses its access")
	own2 := tradeBootstrap(t, agents["edge-2"], ns2)
	g.Expect(hub.Create(ctx, &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns2, Name: "intruder"},
		Spec: holdfastv1.ClusterSpec{KubeconfigSecretRef: holdfastv1.SecretKeyReference{Name: "intruder"}}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := conditions.Get(cluster(g, ns2, "edge-2"), holdfastv1.ClusterConnectedCondition)
		g.Expect(c.Reason).To(Equal(holdfastv1.NamespaceSharedReason))
		g.Expect(refused(ctx, own2, ns2)).To(BeTrue(), "the agent still reads a shared namespace")
	}).WithTimeout(30 * time.Second).Should(Succeed())

	t.Log("Deleting a Pull Cluster removes its agent's identity")
	g.Expect(hub.Delete(ctx, cluster(g, ns1, "edge-1"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := hub.Get(ctx, client.ObjectKey{Namespace: ns1, Name: "edge-1"}, &holdfastv1.Cluster{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Cluster still there: %v", err)
		err = hub.Get(ctx, types.NamespacedName{Namespace: ns1, Name: agentaccess.ServiceAccountName}, &corev1.ServiceAccount{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "ServiceAccount still there: %v", err)
		list := &corev1.SecretList{}
		g.Expect(hub.List(ctx, list, client.InNamespace(ns1), client.MatchingLabels{work.StatusLabel: naming.StatusName("hello", "edge-1")})).To(Succeed())
		g.Expect(list.Items).To(BeEmpty(), "the work of a deleted cluster's status object")
	}).WithTimeout(30 * time.Second).Should(Succeed())
}

// startHubController starts a hub and the controller on it, with the rights the chart gives it,
// not the admin's: what it grants the agents and where it publishes is checked against them;
// cli runs the holdfast command there as the admin.
func startHubController(t *testing.T) (*sandbox.ControlPlane, client.Client, *cliRunner) {
	t.Helper()
	hubPlane, hub := startHub(t)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, hubPlane.Kubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	mgr, _, err := controller.NewManager(t.Context(), asController(t, hub, hubPlane.RESTConfig()), controller.Options{MetricsAddr: "0", HealthAddr: "0", SkipNameValidation: true,
		ProbeInterval: 500 * time.Millisecond, ConnectionGrace: 3 * time.Second, Version: testVersion})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(t.Context()) }()
	return hubPlane, hub, &cliRunner{kubeconfig: path}
}

// asController gives the ServiceAccount holdfast-system/holdfast the controller's generated RBAC
// (config/rbac/role.yaml, as the chart installs it) and returns cfg impersonating it.
func asController(t *testing.T, hub client.Client, cfg *rest.Config) *rest.Config {
	t.Helper()
	ctx := t.Context()
	sa := onboard.DefaultController
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sa.Namespace}}))
	must(hub.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: sa.Namespace, Name: sa.Name}}))
	data, err := os.ReadFile("../../config/rbac/role.yaml")
	must(err)
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}
	for _, doc := range yamlDocs(data) {
		role := &rbacv1.ClusterRole{}
		must(yaml.Unmarshal(doc, role))
		switch role.Kind {
		case "ClusterRole":
			must(hub.Create(ctx, role))
			must(hub.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name}, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}}))
		case "Role":
			must(hub.Create(ctx, &rbacv1.Role{ObjectMeta: role.ObjectMeta, Rules: role.Rules}))
			must(hub.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: role.Namespace, Name: role.Name}, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}}))
		}
	}
	out := rest.CopyConfig(cfg)
	out.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name}
	return out
}

// yamlDocs splits a multi-document YAML stream.
func yamlDocs(data []byte) [][]byte {
	var out [][]byte
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := docs.Read()
		if err != nil {
			return out
		}
		out = append(out, doc)
	}
}

// applyManifests creates on a cluster the objects of a manifests file.
func applyManifests(t *testing.T, c client.Client, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range yamlDocs(data) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil || len(u.Object) == 0 {
			continue
		}
		if err := c.Create(t.Context(), u); err != nil {
			t.Fatalf("applying %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// runAgent runs the agent of cluster in the background with the admin's rights on its own
// cluster (what the default --agent-cluster-role gives it); stop ends it and waits.
func runAgent(t *testing.T, own *rest.Config, cluster types.NamespacedName) (stop func()) {
	t.Helper()
	return runAgentOf(t, own, cluster, testVersion)
}

// testVersion is the version of the hub and of the agents the tests run.
const testVersion = "v0.4.0"

// runAgentOf runs an agent of version v (runAgent).
func runAgentOf(t *testing.T, own *rest.Config, cluster types.NamespacedName, v string) (stop func()) {
	t.Helper()
	return runAgentWith(t, own, cluster, v, 500*time.Millisecond)
}

// runAgentWith runs an agent of version v renewing its Lease every heartbeat (runAgent).
func runAgentWith(t *testing.T, own *rest.Config, cluster types.NamespacedName, v string, heartbeat time.Duration) (stop func()) {
	t.Helper()
	scheme, err := controller.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	return runAgentOptions(t, agent.Options{Cluster: cluster, Own: own, Scheme: scheme, Version: v, Heartbeat: heartbeat,
		HubSecret: types.NamespacedName{Namespace: onboard.Namespace, Name: onboard.AgentHubSecret}})
}

// runAgentOptions runs an agent with o (runAgent).
func runAgentOptions(t *testing.T, o agent.Options) (stop func()) {
	t.Helper()
	// Tests run several agents in one process, one after the other or at once.
	o.Controller.SkipNameValidation = true
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- agent.Run(ctx, o) }()
	var once bool
	stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the agent: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// keptToken is a hub config with the token the agent keeps on its cluster.
func keptToken(t *testing.T, edge client.Client, hub *rest.Config) *rest.Config {
	t.Helper()
	secret := &corev1.Secret{}
	if err := edge.Get(t.Context(), client.ObjectKey{Namespace: onboard.Namespace, Name: onboard.AgentHubSecret}, secret); err != nil {
		t.Fatal(err)
	}
	if len(secret.Data["token"]) == 0 {
		t.Fatal("the agent keeps no token of its own")
	}
	cfg := rest.CopyConfig(hub)
	cfg.BearerToken = string(secret.Data["token"])
	return cfg
}

// agentHubConfig reads the hub kubeconfig from the agent's manifests as the agent would.
func agentHubConfig(t *testing.T, manifests string) *rest.Config {
	t.Helper()
	data, err := os.ReadFile(manifests)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range yamlDocs(data) {
		secret := &corev1.Secret{}
		if err := yaml.Unmarshal(doc, secret); err != nil || secret.Kind != "Secret" {
			continue
		}
		cfg, err := fleet.RESTConfigFromKubeconfig(secret.Data[onboard.AgentHubKey])
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	t.Fatalf("no Secret in the agent's manifests:\n%s", data)
	return nil
}

// tradeBootstrap does what the agent does first: a token of its own, then the bootstrap Secret
// deleted.
func tradeBootstrap(t *testing.T, bootstrap *rest.Config, namespace string) *rest.Config {
	t.Helper()
	cs, err := kubernetes.NewForConfig(bootstrap)
	if err != nil {
		t.Fatal(err)
	}
	seconds := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(t.Context(), agentaccess.ServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("trading the bootstrap token: %v", err)
	}
	if err := cs.CoreV1().Secrets(namespace).Delete(t.Context(), agentaccess.BootstrapSecretName, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the bootstrap Secret: %v", err)
	}
	own := rest.CopyConfig(bootstrap)
	own.BearerToken = tr.Status.Token
	return own
}

// refused reports whether cfg's credentials no longer read namespace.
func refused(ctx context.Context, cfg *rest.Config, namespace string) bool {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false
	}
	_, err = cs.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{})
	return apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err)
}

// tokenFor asks for a token of the agent of namespace with cfg's credentials.
func tokenFor(ctx context.Context, cfg *rest.Config, namespace string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, agentaccess.ServiceAccountName, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	return err
}

// readWork reads the work published for a status object as its agent would, with c.
func readWork(ctx context.Context, g Gomega, c client.Client, namespace, status string) work.Work {
	css := &holdfastv1.ClusterServiceStatus{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: status}, css)).To(Succeed())
	digest := css.Annotations[clusterservicestatus.WorkAnnotation]
	g.Expect(digest).NotTo(BeEmpty(), "no work named")
	list := &corev1.SecretList{}
	g.Expect(c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{work.StatusLabel: status})).To(Succeed())
	data, err := work.Join(list.Items, digest)
	g.Expect(err).NotTo(HaveOccurred())
	w, err := work.Decode(data, digest)
	g.Expect(err).NotTo(HaveOccurred())
	return w
}

// agentLease is the heartbeat an agent of a 1.36 cluster writes.
func agentLease(namespace, cluster string) *coordinationv1.Lease {
	now := metav1.NewMicroTime(time.Now())
	r := agentaccess.Report{AgentVersion: "v0.0.0-test", KubernetesVersion: "v1.36.4", User: "system:serviceaccount:holdfast-system:holdfast-agent",
		ClusterID: "6f1c9a51-7f47-4a5e-9d3b-0f6c1b2d9e10", MutatingAdmissionPolicies: true, ValidatingAdmissionPolicies: true}
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: agentaccess.LeaseName,
		Labels: map[string]string{agentaccess.Label: cluster}, Annotations: r.Annotations()},
		Spec: coordinationv1.LeaseSpec{RenewTime: &now}}
}

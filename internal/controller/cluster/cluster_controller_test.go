package cluster_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/testsupport"
)

const eventually = 30 * time.Second

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cluster-test-"}}
	if err := hubClient.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() { _ = hubClient.Delete(context.Background(), ns) })
	return ns.Name
}

// createCluster creates a Cluster whose kubeconfig Secret holds data under key (no Secret when data is nil).
func createCluster(t *testing.T, ns, name, key string, data []byte) client.ObjectKey {
	t.Helper()
	ctx := context.Background()
	secretName := name + "-kubeconfig"
	if data != nil {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: secretName}, Data: map[string][]byte{key: data}}
		if err := hubClient.Create(ctx, secret); err != nil {
			t.Fatalf("creating Secret: %v", err)
		}
	}
	c := &holdfastv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       holdfastv1.ClusterSpec{KubeconfigSecretRef: holdfastv1.SecretKeyReference{Name: secretName}},
	}
	if err := hubClient.Create(ctx, c); err != nil {
		t.Fatalf("creating Cluster: %v", err)
	}
	return client.ObjectKeyFromObject(c)
}

func setSecret(t *testing.T, key client.ObjectKey, data []byte) {
	t.Helper()
	secret := &corev1.Secret{}
	g := NewWithT(t)
	g.Expect(hubClient.Get(context.Background(), client.ObjectKey{Namespace: key.Namespace, Name: key.Name + "-kubeconfig"}, secret)).To(Succeed())
	secret.Data = map[string][]byte{holdfastv1.DefaultKubeconfigKey: data}
	g.Expect(hubClient.Update(context.Background(), secret)).To(Succeed())
}

func getCluster(g Gomega, key client.ObjectKey) *holdfastv1.Cluster {
	c := &holdfastv1.Cluster{}
	g.Expect(hubClient.Get(context.Background(), key, c)).To(Succeed())
	return c
}

func condition(c *holdfastv1.Cluster, t string) metav1.Condition {
	for _, cond := range c.Status.Conditions {
		if cond.Type == t {
			return cond
		}
	}
	return metav1.Condition{}
}

// expectCondition waits until the Cluster's condition has the status and reason.
func expectCondition(t *testing.T, key client.ObjectKey, condType string, status metav1.ConditionStatus, reason string) *holdfastv1.Cluster {
	t.Helper()
	var c *holdfastv1.Cluster
	NewWithT(t).Eventually(func(g Gomega) {
		c = getCluster(g, key)
		cond := condition(c, condType)
		g.Expect(cond.Status).To(Equal(status), "%s: %s", condType, cond.Message)
		g.Expect(cond.Reason).To(Equal(reason), "%s: %s", condType, cond.Message)
	}).WithTimeout(eventually).WithPolling(100 * time.Millisecond).Should(Succeed())
	return c
}

// expectContract checks the status contract every Cluster status must meet.
func expectContract(t *testing.T, c *holdfastv1.Cluster) {
	t.Helper()
	g := NewWithT(t)
	for _, tpe := range []string{holdfastv1.ReadyCondition, holdfastv1.ClusterConnectedCondition, holdfastv1.PausedCondition, holdfastv1.AdmissionPoliciesCondition} {
		cond := condition(c, tpe)
		g.Expect(cond.Type).To(Equal(tpe), "condition %s is set", tpe)
		g.Expect(cond.Reason).NotTo(BeEmpty(), "condition %s has a reason", tpe)
		g.Expect(cond.ObservedGeneration).To(Equal(c.Generation), "condition %s observed generation", tpe)
	}
	g.Expect(c.Status.ObservedGeneration).To(Equal(c.Generation))
}

func kubeconfigWith(t *testing.T, base []byte, mutate func(*clientcmdapi.Config)) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(base)
	if err != nil {
		t.Fatalf("loading kubeconfig: %v", err)
	}
	mutate(cfg)
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatalf("writing kubeconfig: %v", err)
	}
	return out
}

func currentUser(cfg *clientcmdapi.Config) *clientcmdapi.AuthInfo {
	return cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
}

func currentCluster(cfg *clientcmdapi.Config) *clientcmdapi.Cluster {
	return cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
}

func TestClusterConnects(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	key := createCluster(t, ns, "good", holdfastv1.DefaultKubeconfigKey, target.Kubeconfig())

	c := expectCondition(t, key, holdfastv1.ReadyCondition, metav1.ConditionTrue, holdfastv1.ReadyReason)
	expectContract(t, c)
	g.Expect(condition(c, holdfastv1.ClusterConnectedCondition).Reason).To(Equal(holdfastv1.ConnectedReason))
	g.Expect(condition(c, holdfastv1.PausedCondition).Status).To(Equal(metav1.ConditionFalse))
	g.Expect(c.Status.Initialization).NotTo(BeNil())
	g.Expect(*c.Status.Initialization.Provisioned).To(BeTrue())
	g.Expect(c.Status.Version).To(Equal("v1.36.4"))
	g.Expect(c.Status.User).To(Equal("admin"))
	g.Expect(c.Status.LastProbeTime).NotTo(BeNil())
	g.Expect(c.Status.LastConnectedTime).NotTo(BeNil())
	g.Expect(c.Spec.KubeconfigSecretRef.Key).To(Equal("value"), "the key defaults to value")
	// The sandbox target is Kubernetes 1.36 with every API on: both admission policy kinds.
	c = expectCondition(t, key, holdfastv1.AdmissionPoliciesCondition, metav1.ConditionTrue, holdfastv1.AdmissionPoliciesServedReason)
	g.Expect(condition(c, holdfastv1.AdmissionPoliciesCondition).Message).To(
		ContainSubstring("serves admissionregistration.k8s.io/v1 mutatingadmissionpolicies and validatingadmissionpolicies"))

	conn := registry.Get(key)
	g.Expect(conn).NotTo(BeNil(), "the registry holds a connection")
	ver, err := conn.Probe(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ver.Version).To(Equal("v1.36.4"))

	// A changed Secret rebuilds the connection: the cluster is now reached as another user.
	other, err := target.KubeconfigForUser("someone-else")
	g.Expect(err).NotTo(HaveOccurred())
	setSecret(t, key, other)
	g.Eventually(func(g Gomega) {
		g.Expect(getCluster(g, key).Status.User).To(Equal("someone-else"))
	}).WithTimeout(eventually).Should(Succeed())
	g.Expect(registry.Get(key)).NotTo(BeIdenticalTo(conn), "the connection was rebuilt")
}

// secretMarker is planted in every bad Secret; it must never show up outside the Secret.
const secretMarker = "hf-s3cr3t-marker-4b1d"

func TestClusterBadInput(t *testing.T) {
	ns := newNamespace(t)
	good := createCluster(t, ns, "healthy", holdfastv1.DefaultKubeconfigKey, target.Kubeconfig())
	before := expectCondition(t, good, holdfastv1.ReadyCondition, metav1.ConditionTrue, holdfastv1.ReadyReason)
	goodSince := condition(before, holdfastv1.ClusterConnectedCondition).LastTransitionTime

	targetCfg, err := clientcmd.Load(target.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	clientKey := base64.StdEncoding.EncodeToString(currentUser(targetCfg).ClientKeyData)
	foreignUser, err := hub.KubeconfigForUser("intruder")
	if err != nil {
		t.Fatal(err)
	}
	foreignCfg, err := clientcmd.Load(foreignUser)
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name       string
		noSecret   bool
		key        string
		data       []byte
		wantReason string
		wantInMsg  string
	}{
		{name: "missing-secret", noSecret: true, wantReason: holdfastv1.SecretNotFoundReason, wantInMsg: "not found"},
		{name: "missing-key", key: "kubeconfig", data: []byte(secretMarker), wantReason: holdfastv1.SecretKeyNotFoundReason, wantInMsg: `no key "value"`},
		{name: "not-a-kubeconfig", data: []byte("apiVersion: v1\nkind: Config\nclusters: [" + secretMarker), wantReason: holdfastv1.InvalidKubeconfigReason, wantInMsg: "could not be parsed"},
		{name: "garbage-scalar", data: []byte(secretMarker), wantReason: holdfastv1.InvalidKubeconfigReason, wantInMsg: "could not be parsed"},
		{name: "no-current-context", data: kubeconfigWith(t, target.Kubeconfig(), func(c *clientcmdapi.Config) { c.CurrentContext = "" }),
			wantReason: holdfastv1.NoCurrentContextReason, wantInMsg: "current-context"},
		{name: "exec-plugin", data: kubeconfigWith(t, target.Kubeconfig(), func(c *clientcmdapi.Config) {
			currentUser(c).Exec = &clientcmdapi.ExecConfig{Command: "/bin/sh", Args: []string{"-c", secretMarker}, APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
		}), wantReason: holdfastv1.InvalidKubeconfigReason, wantInMsg: "exec credential plugin"},
		{name: "file-reference", data: kubeconfigWith(t, target.Kubeconfig(), func(c *clientcmdapi.Config) {
			currentUser(c).ClientKeyData, currentUser(c).ClientKey = nil, "/var/run/secrets/kubernetes.io/serviceaccount/token"
		}), wantReason: holdfastv1.InvalidKubeconfigReason, wantInMsg: "refers to files"},
		{name: "unreachable", data: kubeconfigWith(t, target.Kubeconfig(), func(c *clientcmdapi.Config) {
			currentCluster(c).Server = "https://127.0.0.1:1"
		}), wantReason: holdfastv1.UnreachableReason, wantInMsg: "connection refused"},
		{name: "tls-unknown-authority", data: kubeconfigWith(t, target.Kubeconfig(), func(c *clientcmdapi.Config) {
			currentCluster(c).CertificateAuthorityData = hub.CACert()
		}), wantReason: holdfastv1.TLSFailedReason, wantInMsg: "certificate"},
		{name: "token-rejected", data: kubeconfigWith(t, target.Kubeconfig(), func(c *clientcmdapi.Config) {
			u := currentUser(c)
			u.ClientCertificateData, u.ClientKeyData, u.Token = nil, nil, secretMarker
		}), wantReason: holdfastv1.CredentialsRejectedReason},
		{name: "cert-from-another-ca", data: kubeconfigWith(t, target.Kubeconfig(), func(c *clientcmdapi.Config) {
			*currentUser(c) = *currentUser(foreignCfg)
		}), wantReason: holdfastv1.CredentialsRejectedReason},
	}
	keys := map[string]client.ObjectKey{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			key := tc.key
			if key == "" {
				key = holdfastv1.DefaultKubeconfigKey
			}
			data := tc.data
			if tc.noSecret {
				data = nil
			}
			k := createCluster(t, ns, tc.name, key, data)
			keys[tc.name] = k
			c := expectCondition(t, k, holdfastv1.ClusterConnectedCondition, metav1.ConditionFalse, tc.wantReason)
			expectContract(t, c)
			ready := condition(c, holdfastv1.ReadyCondition)
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(tc.wantReason), "Ready carries the reason to fix")
			g.Expect(condition(c, holdfastv1.ClusterConnectedCondition).Message).To(ContainSubstring(tc.wantInMsg))
			g.Expect(c.Status.Initialization).To(BeNil(), "never connected, so not provisioned")
			admission := condition(c, holdfastv1.AdmissionPoliciesCondition)
			g.Expect(admission.Status).To(Equal(metav1.ConditionUnknown), "what a cluster never connected to serves is not known")
			g.Expect(admission.Reason).To(Equal(holdfastv1.ProbingReason))
			g.Expect(registry.Get(k) == nil || tc.wantReason == holdfastv1.UnreachableReason ||
				tc.wantReason == holdfastv1.TLSFailedReason || tc.wantReason == holdfastv1.CredentialsRejectedReason).To(BeTrue(),
				"a declaration error leaves no connection behind")
			expectEvent(t, ns, tc.name, tc.wantReason)
			// kstatus (kubectl wait, Flux, Argo CD): a reason someone must fix is Failed
			// (Stalled), one that clears on its own InProgress (Reconciling).
			want := "InProgress"
			if holdfastv1.StalledReasons[tc.wantReason] {
				want = "Failed"
			}
			g.Expect(testsupport.KStatus(t, c, holdfastv1.GroupVersion.WithKind("Cluster"))).To(BeEquivalentTo(want), "kstatus for %s", tc.wantReason)
		})
	}

	t.Run("secret-becomes-valid", func(t *testing.T) {
		k := keys["not-a-kubeconfig"]
		setSecret(t, k, target.Kubeconfig())
		c := expectCondition(t, k, holdfastv1.ReadyCondition, metav1.ConditionTrue, holdfastv1.ReadyReason)
		expectContract(t, c)
	})
	t.Run("missing-secret-appears", func(t *testing.T) {
		k := keys["missing-secret"]
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: k.Name + "-kubeconfig"},
			Data: map[string][]byte{holdfastv1.DefaultKubeconfigKey: target.Kubeconfig()}}
		NewWithT(t).Expect(hubClient.Create(context.Background(), secret)).To(Succeed())
		expectCondition(t, k, holdfastv1.ReadyCondition, metav1.ConditionTrue, holdfastv1.ReadyReason)
	})

	t.Run("other-clusters-unaffected", func(t *testing.T) {
		g := NewWithT(t)
		c := getCluster(g, good)
		g.Expect(condition(c, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(condition(c, holdfastv1.ClusterConnectedCondition).LastTransitionTime).To(Equal(goodSince),
			"the healthy Cluster never left Connected")
	})

	t.Run("no-secret-material-anywhere", func(t *testing.T) {
		expectNowhere(t, ns, "InvalidKubeconfig", secretMarker, clientKey, string(currentUser(targetCfg).ClientKeyData))
	})
}

// expectNowhere checks that none of the markers is in the Clusters of namespace ns (status),
// their Events or the controller's logs, which must mention witness (so that the log sink is
// known to see them).
func expectNowhere(t *testing.T, ns, witness string, markers ...string) {
	t.Helper()
	g := NewWithT(t)
	list := &holdfastv1.ClusterList{}
	g.Expect(hubClient.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	status, err := json.Marshal(list)
	g.Expect(err).NotTo(HaveOccurred())
	events := &eventsv1.EventList{}
	g.Expect(hubClient.List(context.Background(), events, client.InNamespace(ns))).To(Succeed())
	g.Expect(events.Items).NotTo(BeEmpty())
	eventText, err := json.Marshal(events)
	g.Expect(err).NotTo(HaveOccurred())
	logText := logs.String()
	g.Expect(logText).To(ContainSubstring(witness), "the log sink sees the controller's logs")
	for _, m := range markers {
		g.Expect(string(status)).NotTo(ContainSubstring(m), "status")
		g.Expect(string(eventText)).NotTo(ContainSubstring(m), "events")
		g.Expect(logText).NotTo(ContainSubstring(m), "logs")
	}
}

// bodyMarker is what an internal endpoint answers; it must never show up on the hub.
const bodyMarker = "internal-secret-marker-123"

// TestClusterServerAnswersAreNotEchoed: a Cluster's server can be any endpoint the controller
// reaches, internal ones included, and the Cluster's author reads its conditions and Events.
// What a server that is not a Kubernetes API server answers is reported by status code only.
func TestClusterServerAnswersAreNotEchoed(t *testing.T) {
	ns := newNamespace(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		switch {
		case strings.HasPrefix(r.URL.Path, "/proxied/version"):
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"major":"1","minor":"36","gitVersion":"v1.36.4"}`)
		case strings.HasPrefix(r.URL.Path, "/proxied/"):
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "upstream said: "+bodyMarker)
		default:
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, "db password for "+bodyMarker)
		}
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	pointAt := func(server string) []byte {
		return kubeconfigWith(t, target.Kubeconfig(), func(c *clientcmdapi.Config) {
			currentCluster(c).Server, currentCluster(c).CertificateAuthorityData = server, ca
		})
	}
	cases := []struct{ name, server, wantInMsg string }{
		{name: "internal-endpoint", server: srv.URL, wantInMsg: "reading the server version: HTTP 500 Internal Server Error: the server is not a Kubernetes API server"},
		{name: "behind-a-proxy", server: srv.URL + "/proxied", wantInMsg: "reviewing the kubeconfig's identity: HTTP 502 Bad Gateway"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := createCluster(t, ns, tc.name, holdfastv1.DefaultKubeconfigKey, pointAt(tc.server))
			c := expectCondition(t, k, holdfastv1.ClusterConnectedCondition, metav1.ConditionFalse, holdfastv1.UnreachableReason)
			expectContract(t, c)
			NewWithT(t).Expect(condition(c, holdfastv1.ClusterConnectedCondition).Message).To(ContainSubstring(tc.wantInMsg))
			expectEvent(t, ns, tc.name, holdfastv1.UnreachableReason)
		})
	}

	t.Run("no-body-anywhere", func(t *testing.T) {
		expectNowhere(t, ns, "HTTP 502 Bad Gateway", bodyMarker)
	})
}

func expectEvent(t *testing.T, ns, name, reason string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		events := &eventsv1.EventList{}
		g.Expect(hubClient.List(context.Background(), events, client.InNamespace(ns))).To(Succeed())
		found := false
		for _, e := range events.Items {
			if e.Regarding.Name == name && e.Reason == reason && e.Type == corev1.EventTypeWarning {
				found = true
			}
		}
		g.Expect(found).To(BeTrue(), "a Warning event %s on %s", reason, name)
	}).WithTimeout(eventually).Should(Succeed())
}

func TestClusterConnectionLossAndRecovery(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	key := createCluster(t, ns, "flaky", holdfastv1.DefaultKubeconfigKey, target.Kubeconfig())
	expectCondition(t, key, holdfastv1.ReadyCondition, metav1.ConditionTrue, holdfastv1.ReadyReason)

	// Within the grace period the last known state holds, and says that probes fail. It is
	// looked for from before the stop begins: probes fail as soon as the API server starts
	// shutting down, and a graceful stop can take longer than the grace (sandbox stopGrace).
	withinGrace := watchForFailingButConnected(t, key)
	g.Expect(target.StopAPIServer()).To(Succeed())
	restarted := false
	defer func() {
		if !restarted {
			_ = target.StartAPIServer(context.Background())
		}
	}()
	g.Eventually(withinGrace).WithTimeout(eventually).Should(BeClosed(),
		"the Cluster stayed Connected, saying that the last probe failed, before the grace ran out")

	// After it, the cluster is reported unreachable.
	c := expectCondition(t, key, holdfastv1.ClusterConnectedCondition, metav1.ConditionFalse, holdfastv1.UnreachableReason)
	expectContract(t, c)
	g.Expect(condition(c, holdfastv1.ReadyCondition).Reason).To(Equal(holdfastv1.UnreachableReason))
	g.Expect(*c.Status.Initialization.Provisioned).To(BeTrue(), "provisioned is never set back")
	g.Expect(c.Status.LastProbeTime.After(c.Status.LastConnectedTime.Time)).To(BeTrue())
	expectEvent(t, ns, "flaky", holdfastv1.UnreachableReason)

	// Recovery needs nothing but the API server coming back.
	g.Expect(target.StartAPIServer(context.Background())).To(Succeed())
	restarted = true
	c = expectCondition(t, key, holdfastv1.ReadyCondition, metav1.ConditionTrue, holdfastv1.ReadyReason)
	g.Expect(condition(c, holdfastv1.ClusterConnectedCondition).Message).NotTo(ContainSubstring("failed"))
}

// watchForFailingButConnected polls the Cluster until it is Connected with a failed last probe
// (the state within the connection grace) and closes the returned channel when it sees it. The
// polling stops at the end of the test.
func watchForFailingButConnected(t *testing.T, key client.ObjectKey) <-chan struct{} {
	t.Helper()
	seen := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	t.Cleanup(func() { cancel(); <-stopped })
	go func() {
		defer close(stopped)
		ticker := time.NewTicker(50 * time.Millisecond)
		defer ticker.Stop()
		for {
			c := &holdfastv1.Cluster{}
			if err := hubClient.Get(ctx, key, c); err == nil {
				if cond := condition(c, holdfastv1.ClusterConnectedCondition); cond.Status == metav1.ConditionTrue && strings.Contains(cond.Message, "last probe failed") {
					close(seen)
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return seen
}

func TestClusterPauseAndDelete(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	key := createCluster(t, ns, "pausable", holdfastv1.DefaultKubeconfigKey, target.Kubeconfig())
	expectCondition(t, key, holdfastv1.ReadyCondition, metav1.ConditionTrue, holdfastv1.ReadyReason)
	g.Expect(registry.Get(key)).NotTo(BeNil())

	c := getCluster(g, key)
	c.Spec.Paused = true
	g.Expect(hubClient.Update(context.Background(), c)).To(Succeed())
	c = expectCondition(t, key, holdfastv1.PausedCondition, metav1.ConditionTrue, holdfastv1.PausedReason)
	expectContract(t, c)
	g.Expect(condition(c, holdfastv1.ReadyCondition).Reason).To(Equal(holdfastv1.PausedReason))
	g.Expect(condition(c, holdfastv1.ClusterConnectedCondition).Status).To(Equal(metav1.ConditionUnknown))
	g.Expect(condition(c, holdfastv1.AdmissionPoliciesCondition).Status).To(Equal(metav1.ConditionUnknown))
	g.Expect(condition(c, holdfastv1.AdmissionPoliciesCondition).Reason).To(Equal(holdfastv1.PausedReason))
	g.Expect(registry.Get(key)).To(BeNil(), "a paused cluster has no connection")

	c.Spec.Paused = false
	g.Expect(hubClient.Update(context.Background(), c)).To(Succeed())
	expectCondition(t, key, holdfastv1.ReadyCondition, metav1.ConditionTrue, holdfastv1.ReadyReason)
	g.Eventually(func() bool { return registry.Get(key) != nil }).WithTimeout(eventually).Should(BeTrue())

	g.Expect(hubClient.Delete(context.Background(), c)).To(Succeed())
	g.Eventually(func() bool { return registry.Get(key) == nil }).WithTimeout(eventually).Should(BeTrue(),
		"deleting the Cluster tears its connection down")
}

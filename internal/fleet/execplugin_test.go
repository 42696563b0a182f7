package fleet_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/testsupport"
)

// TestExecPluginClusters: Clusters whose kubeconfigs use an exec credential plugin the operator
// allowed (--allowed-exec-plugins), the usual EKS, GKE and AKS setup, work through the
// controller as any other: the plugin answering with a client certificate (cluster-1) and one
// answering with a bearer token (cluster-2) both get the Cluster Ready (probe, as the plugin's
// identity), a MultiClusterService deployed (apply) and an out-of-band edit put back (watch).
//
// The plugin runs as the controller, with its cloud identity: on a hub shared with tenants
// (--platform-namespaces), a tenant's Cluster whose kubeconfig runs the same plugin against a
// platform cluster is refused (InvalidKubeconfig, naming the fix, quoting nothing of the
// kubeconfig) and never connects, while a namespace the operator allows by name
// (--exec-plugin-namespaces) connects.
func TestExecPluginClusters(t *testing.T) {
	testsupport.RequireBinaries(t)
	ctx := context.Background()
	logs := &testsupport.LogBuffer{}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.UseDevMode(true)))
	fleet.InstallExecPlugin(t)

	fl, err := localfleet.Up(ctx, localfleet.Options{Clusters: 2, NoControllerManager: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fl.Stop() })
	hub := fl.HubClient()
	g := NewWithT(t)

	t.Log("cluster-1's kubeconfig runs the plugin for a client certificate, cluster-2's for a ServiceAccount token")
	certKubeconfig, certUser := execCertKubeconfig(t, fl.Targets[0])
	tokenKubeconfig, token := execTokenKubeconfig(t, fl.Targets[1])
	for i, kc := range [][]byte{certKubeconfig, tokenKubeconfig} {
		_, err := fleet.Register(ctx, hub, fleet.Registration{Namespace: fl.Namespace, Name: localfleet.TargetName(i + 1),
			Labels: localfleet.TargetLabels(i + 1), Kubeconfig: kc})
		g.Expect(err).NotTo(HaveOccurred())
	}
	t.Log("A tenant registers a Cluster running the same plugin against cluster-2; so does team-b, which the operator allows")
	for _, ns := range []string{"team-a", "team-b"} {
		_, err := fleet.Register(ctx, hub, fleet.Registration{Namespace: ns, Name: "borrowed", Labels: localfleet.TargetLabels(2), Kubeconfig: tokenKubeconfig})
		g.Expect(err).NotTo(HaveOccurred())
	}

	var watchedMu sync.Mutex
	watched := map[string]bool{} // "<cluster>/<resource>" the controller watches on a target
	stop, err := fl.StartController(ctx, controller.Options{
		OnTargetWatch: func(cluster types.NamespacedName, resource string) {
			watchedMu.Lock()
			defer watchedMu.Unlock()
			watched[cluster.Name+"/"+resource] = true
		},
		AllowedExecPlugins: []string{fleet.ExecPlugin}, PlatformNamespaces: []string{fl.Namespace}, ExecPluginNamespaces: []string{"team-b"},
		ProbeInterval: 500 * time.Millisecond, ConnectionGrace: 2 * time.Second, SkipNameValidation: true,
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("controller logs:\n%s", logs.String())
		}
	})

	t.Log("Probe: both Clusters become Ready, as the identity the plugin answered with")
	eventuallyExec(t, func(g Gomega) {
		for name, user := range map[string]string{"cluster-1": certUser, "cluster-2": "system:serviceaccount:kube-system:holdfast-exec"} {
			c := &holdfastv1.Cluster{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: name}, c)).To(Succeed())
			g.Expect(conditions.IsTrue(c, holdfastv1.ReadyCondition)).To(BeTrue(), "%s: %+v", name, c.Status.Conditions)
			g.Expect(c.Status.User).To(Equal(user), name)
		}
	})

	t.Log("The tenant's Cluster is refused, saying what to fix; team-b's connects")
	borrowed := func(ns string) *holdfastv1.Cluster {
		c := &holdfastv1.Cluster{}
		NewWithT(t).Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "borrowed"}, c)).To(Succeed())
		return c
	}
	eventuallyExec(t, func(g Gomega) {
		c := borrowed("team-a")
		connected := conditions.Get(c, holdfastv1.ClusterConnectedCondition)
		g.Expect(connected).NotTo(BeNil())
		g.Expect(connected.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(connected.Reason).To(Equal(holdfastv1.InvalidKubeconfigReason))
		g.Expect(connected.Message).To(And(ContainSubstring(`not of namespace "team-a"`), ContainSubstring("--exec-plugin-namespaces")))
		g.Expect(conditions.IsTrue(borrowed("team-b"), holdfastv1.ReadyCondition)).To(BeTrue())
		g.Expect(borrowed("team-b").Status.User).To(Equal("system:serviceaccount:kube-system:holdfast-exec"))
	})
	rogue := borrowed("team-a")
	g.Expect(rogue.Status.User).To(BeEmpty(), "the tenant's Cluster authenticated as the controller's identity")
	for _, c := range rogue.Status.Conditions {
		g.Expect(c.Message).NotTo(Or(ContainSubstring(token), ContainSubstring(fl.Targets[1].Host()), ContainSubstring("-token")),
			"condition %s quotes the kubeconfig", c.Type)
	}

	t.Log("Apply: a MultiClusterService acting as a ServiceAccount of each target (impersonated) deploys to both")
	targets := make([]client.Client, len(fl.Targets))
	for i, tgt := range fl.Targets {
		targets[i], err = client.New(tgt.RESTConfig(), client.Options{})
		g.Expect(err).NotTo(HaveOccurred())
		clusterAdmin(t, targets[i], "deployer")
	}
	tpl := &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: fl.Namespace, Name: "exec-config"},
		Spec: holdfastv1.ServiceTemplateSpec{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: exec-config, namespace: exec-apps}\ndata: {greeting: hello}\n"}}
	g.Expect(hub.Create(ctx, tpl)).To(Succeed())
	mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "exec-apps"}, Spec: holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "sandbox"}}},
		Services:        []holdfastv1.Service{{Name: "config", Template: holdfastv1.TemplateReference{Namespace: fl.Namespace, Name: tpl.Name}, Namespace: "exec-apps"}},
		ServiceAccount:  &holdfastv1.ServiceAccountReference{Namespace: "kube-system", Name: "deployer"},
		SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
	}}
	g.Expect(hub.Create(ctx, mcs)).To(Succeed())
	key := client.ObjectKey{Namespace: "exec-apps", Name: "exec-config"}
	expectGreeting := func(g Gomega, target client.Client) {
		cm := &corev1.ConfigMap{}
		g.Expect(target.Get(ctx, key, cm)).To(Succeed())
		g.Expect(cm.Data).To(HaveKeyWithValue("greeting", "hello"))
	}
	eventuallyExec(t, func(g Gomega) {
		for i, target := range targets {
			expectGreeting(g, target)
			css := &holdfastv1.ClusterServiceStatus{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: naming.StatusName(mcs.Name, localfleet.TargetName(i+1))}, css)).To(Succeed())
			g.Expect(conditions.IsTrue(css, holdfastv1.ReadyCondition)).To(BeTrue(), "%s: %+v", css.Name, css.Status.Conditions)
		}
	})

	t.Log("Watch: the controller watches ConfigMaps on both, through the plugin's credentials; an out-of-band edit on each is put back")
	eventuallyExec(t, func(g Gomega) {
		watchedMu.Lock()
		defer watchedMu.Unlock()
		g.Expect(watched).To(And(HaveKey("cluster-1/v1/configmaps"), HaveKey("cluster-2/v1/configmaps")))
	})
	for _, target := range targets {
		cm := &corev1.ConfigMap{}
		g.Expect(target.Get(ctx, key, cm)).To(Succeed())
		cm.Data["greeting"] = "tampered"
		g.Expect(target.Update(ctx, cm, client.FieldOwner("mallory"))).To(Succeed())
	}
	eventuallyExec(t, func(g Gomega) {
		for _, target := range targets {
			expectGreeting(g, target)
		}
	})

	g.Expect(logs.String()).NotTo(ContainSubstring(token), "the plugin's token reached the logs")
}

// eventuallyExec retries f until it passes.
func eventuallyExec(t *testing.T, f func(g Gomega)) {
	t.Helper()
	NewWithT(t).Eventually(f).WithTimeout(90 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// execKubeconfig returns cp's admin kubeconfig with its user's credentials replaced by the
// plugin run with args, and that user as it was.
func execKubeconfig(t *testing.T, cp *sandbox.ControlPlane, args ...string) ([]byte, *clientcmdapi.AuthInfo) {
	t.Helper()
	cfg, err := clientcmd.Load(cp.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	user := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
	admin := user.DeepCopy()
	user.ClientCertificateData, user.ClientKeyData, user.Token = nil, nil, ""
	user.Exec = &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: fleet.ExecPlugin,
		Args: args, InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode}
	kubeconfig, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kubeconfig, admin
}

// execCertKubeconfig is a kubeconfig of cp whose plugin answers with the admin's client
// certificate, and the user name that certificate authenticates.
func execCertKubeconfig(t *testing.T, cp *sandbox.ControlPlane) ([]byte, string) {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert"), filepath.Join(dir, "key")
	kubeconfig, admin := execKubeconfig(t, cp, certFile, keyFile)
	if err := os.WriteFile(certFile, admin.ClientCertificateData, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, admin.ClientKeyData, 0o600); err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(admin.ClientCertificateData)
	if block == nil {
		t.Fatal("the admin's client certificate is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return kubeconfig, cert.Subject.CommonName
}

// clusterAdmin creates the ServiceAccount kube-system/name on a target, bound to cluster-admin.
func clusterAdmin(t *testing.T, admin client.Client, name string) *corev1.ServiceAccount {
	t.Helper()
	ctx := context.Background()
	g := NewWithT(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name}}
	g.Expect(admin.Create(ctx, sa)).To(Succeed())
	g.Expect(admin.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}})).To(Succeed())
	return sa
}

// execTokenKubeconfig is a kubeconfig of cp whose plugin answers with a token of the
// ServiceAccount kube-system/holdfast-exec, bound to cluster-admin, and that token.
func execTokenKubeconfig(t *testing.T, cp *sandbox.ControlPlane) ([]byte, string) {
	t.Helper()
	ctx := context.Background()
	g := NewWithT(t)
	admin, err := client.New(cp.RESTConfig(), client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	sa := clusterAdmin(t, admin, "holdfast-exec")
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}
	g.Expect(admin.SubResource("token").Create(ctx, sa, req)).To(Succeed())
	g.Expect(req.Status.Token).NotTo(BeEmpty())
	tokenFile := filepath.Join(t.TempDir(), "token")
	g.Expect(os.WriteFile(tokenFile, []byte(req.Status.Token), 0o600)).To(Succeed())
	kubeconfig, _ := execKubeconfig(t, cp, "-token", tokenFile)
	return kubeconfig, req.Status.Token
}

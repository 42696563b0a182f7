package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/onboard"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/testsupport"
)

// TestClusterAddAndRemove: `holdfast cluster add CONTEXT` gives Holdfast its own ServiceAccount
// on two sandbox clusters — one cluster-wide, one limited to a namespace — and registers them on
// the hub; the controller reaches both with those identities (not the admin's), and deploys a
// service into the limited one's allowed namespace, which is all that identity may write there.
// `holdfast cluster remove --target-context` takes the Cluster off the hub and the identity off
// the cluster: its token stops working.
func TestClusterAddAndRemove(t *testing.T) {
	testsupport.RequireBinaries(t)
	g := NewWithT(t)
	ctx := t.Context()
	planes, err := sandbox.StartMany(ctx, []sandbox.Options{{Name: "hub"}, {Name: "wide"}, {Name: "narrow"}})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		for _, p := range planes {
			_ = p.Stop()
		}
	})
	hubPlane, narrow := planes[0], planes[2]
	g.Expect(localfleet.InstallCRDs(ctx, hubPlane)).To(Succeed())
	narrowCS, err := kubernetes.NewForConfig(narrow.RESTConfig())
	g.Expect(err).NotTo(HaveOccurred())
	_, err = narrowCS.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	// One kubeconfig with the three admins' contexts, as a platform engineer's would be.
	merged := clientcmdapi.NewConfig()
	for _, p := range planes {
		kc, err := clientcmd.Load(p.Kubeconfig())
		g.Expect(err).NotTo(HaveOccurred())
		ctxName := kc.CurrentContext
		c := kc.Contexts[ctxName]
		merged.Clusters[p.Name()] = kc.Clusters[c.Cluster]
		merged.AuthInfos[p.Name()] = kc.AuthInfos[c.AuthInfo]
		merged.Contexts[p.Name()] = &clientcmdapi.Context{Cluster: p.Name(), AuthInfo: p.Name()}
	}
	merged.CurrentContext = "hub"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(clientcmd.WriteToFile(*merged, path)).To(Succeed())

	run := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		cmd := newRootCommand()
		cmd.SetArgs(append(args, "--kubeconfig", path))
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		g.Expect(cmd.ExecuteContext(ctx)).To(Succeed(), "holdfast %v: %s", args, out.String())
		return out.String()
	}
	g.Expect(run("cluster", "add", "wide", "--labels", "env=e2e")).To(ContainSubstring("added (Holdfast's access on it: cluster-wide)"))
	g.Expect(run("cluster", "add", "narrow", "--name", "limited", "--labels", "env=limited", "--target-namespaces", "apps")).
		To(ContainSubstring("in namespaces apps"))

	scheme, err := controller.Scheme()
	g.Expect(err).NotTo(HaveOccurred())
	hub, err := client.New(hubPlane.RESTConfig(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	secret := &corev1.Secret{}
	g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: onboard.Namespace, Name: fleet.KubeconfigSecretName("limited")}, secret)).To(Succeed())
	limitedCfg, err := fleet.RESTConfigFromKubeconfig(secret.Data[holdfastv1.DefaultKubeconfigKey])
	g.Expect(err).NotTo(HaveOccurred(), "the registered kubeconfig is self-contained")
	g.Expect(limitedCfg.BearerToken).NotTo(BeEmpty(), "a ServiceAccount token, not the admin's certificate")
	g.Expect(limitedCfg.CertData).To(BeEmpty())
	limited, err := kubernetes.NewForConfig(limitedCfg)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = limited.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "outside its namespace: %v", err)

	mgr, _, err := controller.NewManager(ctx, hubPlane.RESTConfig(), controller.Options{PlatformNamespaces: []string{onboard.Namespace, "templates"}, MetricsAddr: "0", HealthAddr: "0", SkipNameValidation: true})
	g.Expect(err).NotTo(HaveOccurred())
	go func() { _ = mgr.Start(ctx) }()
	for _, name := range []string{"wide", "limited"} {
		g.Eventually(func(g Gomega) {
			c := &holdfastv1.Cluster{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: onboard.Namespace, Name: name}, c)).To(Succeed())
			g.Expect(conditions.IsTrue(c, holdfastv1.ReadyCondition)).To(BeTrue(), "Cluster %s Ready", name)
		}).WithTimeout(60 * time.Second).Should(Succeed())
	}
	g.Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "templates"}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "templates", Name: "hello"},
		Spec: holdfastv1.ServiceTemplateSpec{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello}\ndata: {from: holdfast}\n"}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "limited"}}},
			Services:        []holdfastv1.Service{{Name: "hello", Namespace: "apps", Template: holdfastv1.TemplateReference{Namespace: "templates", Name: "hello"}}},
		}})).To(Succeed())
	g.Eventually(func() error {
		_, err := narrowCS.CoreV1().ConfigMaps("apps").Get(ctx, "hello", metav1.GetOptions{})
		return err
	}).WithTimeout(60*time.Second).Should(Succeed(), "the service deployed into the allowed namespace")

	g.Expect(run("cluster", "remove", "limited", "--target-context", "narrow")).To(ContainSubstring("removed"))
	err = hub.Get(ctx, client.ObjectKey{Namespace: onboard.Namespace, Name: "limited"}, &holdfastv1.Cluster{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Cluster gone from the hub: %v", err)
	_, err = narrowCS.CoreV1().ServiceAccounts(onboard.Namespace).Get(ctx, onboard.ServiceAccount, metav1.GetOptions{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "ServiceAccount gone from the cluster: %v", err)
	g.Eventually(func() bool {
		_, err := limited.CoreV1().ConfigMaps("apps").List(ctx, metav1.ListOptions{})
		return apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err)
	}).WithTimeout(30*time.Second).Should(BeTrue(), "the token no longer works")
	_ = os.Remove(path)
}

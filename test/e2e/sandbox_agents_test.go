package e2e

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/testsupport"
)

// TestSandboxUpWithAgents runs `holdfast sandbox up --agents` as a user would: its target is a
// Pull cluster in a namespace of its own on the hub, with no kubeconfig there, Ready through its
// agent; a service set selecting the sample fleet is applied on it by the agent, and an edit
// there is put back. SIGTERM stops it all.
func TestSandboxUpWithAgents(t *testing.T) {
	testsupport.RequireBinaries(t)
	bin := buildHoldfast(t)
	dir := t.TempDir()
	hf := startHoldfast(t, bin, readyLinePrefix, "sandbox", "up", "--clusters", "1", "--agents", "--nodes", "0", "--no-controller-manager", "--dir", dir)
	select {
	case <-hf.stdout.found:
	case <-hf.done:
		t.Fatalf("holdfast sandbox up --agents exited before it was ready: %v", hf.waitErr)
	case <-time.After(sandboxReadyTimeout):
		t.Fatalf("holdfast sandbox up --agents printed no %q line within %s", readyLinePrefix, sandboxReadyTimeout)
	}
	g := NewWithT(t)
	ctx := t.Context()
	scheme := runtime.NewScheme()
	g.Expect(holdfastv1.AddToScheme(scheme)).To(Succeed())
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	clientOf := func(path string) client.Client {
		config, err := clientcmd.BuildConfigFromFlags("", path)
		g.Expect(err).NotTo(HaveOccurred())
		c, err := client.New(config, client.Options{Scheme: scheme})
		g.Expect(err).NotTo(HaveOccurred())
		return c
	}
	hub, target := clientOf(filepath.Join(dir, "hub.kubeconfig")), clientOf(filepath.Join(dir, "cluster-1.kubeconfig"))

	c := &holdfastv1.Cluster{}
	g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: "holdfast-pull-cluster-1", Name: "cluster-1"}, c)).To(Succeed())
	g.Expect(c.Pull()).To(BeTrue())
	g.Expect(c.Spec.KubeconfigSecretRef.Name).To(BeEmpty(), "the hub holds no kubeconfig of a Pull cluster")
	g.Expect(conditions.IsTrue(c, holdfastv1.ReadyCondition)).To(BeTrue(), "%+v", c.Status.Conditions)

	g.Expect(hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: sandboxNamespace, Name: "hello"},
		Spec: holdfastv1.ServiceTemplateSpec{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello, namespace: apps}\ndata: {greeting: hello}\n"}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "sandbox"}}},
			SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
			Services:        []holdfastv1.Service{{Name: "hello", Namespace: "apps", Template: holdfastv1.TemplateReference{Namespace: sandboxNamespace, Name: "hello"}}},
		}})).To(Succeed())
	hello := func(g Gomega) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{}
		g.Expect(target.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "hello"}, cm)).To(Succeed())
		return cm
	}
	g.Eventually(func(g Gomega) { g.Expect(hello(g).Data).To(HaveKeyWithValue("greeting", "hello")) }).WithTimeout(time.Minute).Should(Succeed())
	g.Eventually(func(g Gomega) {
		cm := hello(g)
		cm.Data["greeting"] = "edited"
		g.Expect(target.Update(ctx, cm)).To(Succeed())
	}).WithTimeout(30 * time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(hello(g).Data).To(HaveKeyWithValue("greeting", "hello")) }).WithTimeout(30*time.Second).Should(Succeed(), "the edit put back by the agent")

	g.Expect(hf.cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	select {
	case <-hf.done:
	case <-time.After(stopTimeout):
		t.Fatalf("holdfast still running %s after SIGTERM", stopTimeout)
	}
	g.Expect(hf.exitCode()).To(Equal(0), "exit status: %v", hf.waitErr)
	left, err := processesMentioning(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(BeEmpty(), "processes still using %s", dir)
}

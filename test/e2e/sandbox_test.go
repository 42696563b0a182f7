package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	. "github.com/onsi/gomega"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/testsupport"
)

const (
	// sandboxNamespace is where `holdfast sandbox up` documents that it registers the Clusters.
	sandboxNamespace = "holdfast-system"
	// readyLinePrefix starts the one line `holdfast sandbox up` prints once the fleet is Ready.
	readyLinePrefix = "Sandbox ready: "
	// sandboxReadyTimeout bounds the start of a hub, two targets and the controller on a
	// loaded two-core machine.
	sandboxReadyTimeout = 3 * time.Minute
	// stopTimeout bounds how long the sandbox may take to stop after SIGTERM.
	stopTimeout = 30 * time.Second
)

// TestSandboxUp runs `holdfast sandbox up` as a user scripts it: start it, wait for the ready
// line, use the kubeconfig files it wrote with ordinary clients, then stop it with SIGTERM and
// check that nothing it started outlives it. Starting a fleet costs tens of seconds, so the
// steps share one, in order; the last one stops it.
func TestSandboxUp(t *testing.T) {
	testsupport.RequireBinaries(t)
	bin := buildHoldfast(t)
	dir := t.TempDir()
	wantVersion := "v" + sandbox.KubernetesVersion

	began := time.Now()
	hf := startHoldfast(t, bin, readyLinePrefix, "sandbox", "up", "--clusters", "2", "--dir", dir)
	select {
	case <-hf.stdout.found:
	case <-hf.done:
		t.Fatalf("holdfast sandbox up exited before it was ready: %v", hf.waitErr)
	case <-time.After(sandboxReadyTimeout):
		t.Fatalf("holdfast sandbox up printed no %q line within %s", readyLinePrefix, sandboxReadyTimeout)
	}
	t.Logf("Sandbox ready after %s: %s", time.Since(began).Round(time.Millisecond), hf.stdout.Line())

	hubKubeconfig := filepath.Join(dir, "hub.kubeconfig")
	targets := map[string]string{
		"cluster-1": filepath.Join(dir, "cluster-1.kubeconfig"),
		"cluster-2": filepath.Join(dir, "cluster-2.kubeconfig"),
	}

	t.Run("ready line names the kubeconfig files", func(t *testing.T) {
		g := NewWithT(t)
		line := hf.stdout.Line()
		g.Expect(line).To(ContainSubstring("hub=" + hubKubeconfig))
		for name, path := range targets {
			g.Expect(line).To(ContainSubstring(name + "=" + path))
		}
	})

	t.Run("any client reaches every cluster through its kubeconfig file", func(t *testing.T) {
		for name, path := range map[string]string{"hub": hubKubeconfig, "cluster-1": targets["cluster-1"], "cluster-2": targets["cluster-2"]} {
			g := NewWithT(t)
			version, err := clientsetFromFile(g, path).Discovery().ServerVersion()
			g.Expect(err).NotTo(HaveOccurred(), name)
			g.Expect(version.GitVersion).To(Equal(wantVersion), name)
		}
	})

	t.Run("targets run kube-controller-manager", func(t *testing.T) {
		for name, path := range targets {
			t.Run(name, func(t *testing.T) {
				g := NewWithT(t)
				expectDeploymentGetsReplicaSet(t.Context(), g, clientsetFromFile(g, path))
			})
		}
	})

	t.Run("hub reports every Cluster Ready", func(t *testing.T) {
		g := NewWithT(t)
		scheme := runtime.NewScheme()
		g.Expect(holdfastv1.AddToScheme(scheme)).To(Succeed())
		config, err := clientcmd.BuildConfigFromFlags("", hubKubeconfig)
		g.Expect(err).NotTo(HaveOccurred())
		hub, err := client.New(config, client.Options{Scheme: scheme})
		g.Expect(err).NotTo(HaveOccurred())

		clusters := &holdfastv1.ClusterList{}
		g.Expect(hub.List(t.Context(), clusters, client.InNamespace(sandboxNamespace))).To(Succeed())
		g.Expect(clusters.Items).To(HaveLen(len(targets)))
		for _, c := range clusters.Items {
			g.Expect(targets).To(HaveKey(c.Name))
			g.Expect(c.Status.Conditions).To(ContainElement(And(
				HaveField("Type", holdfastv1.ReadyCondition),
				HaveField("Status", metav1.ConditionTrue),
			)), "Cluster %s", c.Name)
			g.Expect(c.Status.Conditions).To(HaveEach(HaveField("Reason", Not(BeEmpty()))), "Cluster %s", c.Name)
			g.Expect(c.Status.Initialization).NotTo(BeNil(), "Cluster %s", c.Name)
			g.Expect(c.Status.Initialization.Provisioned).To(HaveValue(BeTrue()), "Cluster %s", c.Name)
			g.Expect(c.Status.Version).To(Equal(wantVersion), "Cluster %s", c.Name)
		}
	})

	t.Run("kubectl uses a target's kubeconfig", func(t *testing.T) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			t.Skip("kubectl is not on PATH")
		}
		out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", targets["cluster-1"], "get", "ns").CombinedOutput()
		g := NewWithT(t)
		g.Expect(err).NotTo(HaveOccurred(), "kubectl get ns:\n%s", out)
		g.Expect(string(out)).To(ContainSubstring("kube-system"))
	})

	t.Run("SIGTERM stops every process it started", func(t *testing.T) {
		g := NewWithT(t)
		// holdfast itself has --dir in its arguments; everything else mentioning dir is a child.
		procs, err := processesMentioning(dir, hf.pid())
		g.Expect(err).NotTo(HaveOccurred())
		t.Logf("Control-plane processes: %v", procs)
		perCommand := map[string]int{}
		for _, p := range procs {
			perCommand[p.command]++
		}
		// Hub: etcd and kube-apiserver; each target adds kube-controller-manager.
		g.Expect(len(procs)).To(BeNumerically(">=", 2*3+2))
		g.Expect(perCommand).To(HaveKeyWithValue("etcd", 3))
		g.Expect(perCommand).To(HaveKeyWithValue("kube-apiserver", 3))
		g.Expect(perCommand).To(HaveKeyWithValue("kube-controller-manager", 2))

		stopBegan := time.Now()
		g.Expect(hf.cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
		select {
		case <-hf.done:
		case <-time.After(stopTimeout):
			t.Fatalf("holdfast still running %s after SIGTERM", stopTimeout)
		}
		t.Logf("holdfast exited %s after SIGTERM", time.Since(stopBegan).Round(time.Millisecond))
		g.Expect(hf.exitCode()).To(Equal(0), "exit status: %v", hf.waitErr)

		for _, p := range procs {
			g.Expect(sandbox.ProcessAlive(p.pid)).To(BeFalse(), "%s outlived holdfast", p)
		}
		left, err := processesMentioning(dir)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(left).To(BeEmpty(), "processes still using %s", dir)
	})
}

// clientsetFromFile builds a client-go clientset the way most tools do: from a kubeconfig path.
func clientsetFromFile(g Gomega, path string) kubernetes.Interface {
	config, err := clientcmd.BuildConfigFromFlags("", path)
	g.Expect(err).NotTo(HaveOccurred(), path)
	clientset, err := kubernetes.NewForConfig(config)
	g.Expect(err).NotTo(HaveOccurred(), path)
	return clientset
}

// expectDeploymentGetsReplicaSet creates a Deployment in a fresh namespace and waits for the
// ReplicaSet that only a running kube-controller-manager would create for it.
func expectDeploymentGetsReplicaSet(ctx context.Context, g Gomega, cs kubernetes.Interface) {
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	labels := map[string]string{"app": "web"}
	deployment, err := cs.AppsV1().Deployments(ns.Name).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	g.Eventually(func(g Gomega) {
		list, err := cs.AppsV1().ReplicaSets(ns.Name).List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(list.Items).To(ContainElement(HaveField("OwnerReferences", ContainElement(And(
			HaveField("UID", deployment.UID),
			HaveField("Controller", HaveValue(BeTrue())),
		)))))
	}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
}

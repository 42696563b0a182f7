package sandbox

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	. "github.com/onsi/gomega"
)

// deploymentTimeout bounds a Deployment's way to Available: ReplicaSet, two pods, scheduling,
// kwok's stage. Generous for a shared two-core machine; it takes a few seconds.
const deploymentTimeout = 60 * time.Second

func newDeployment(ns, name string, replicas int32, podAnnotations map[string]string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: podAnnotations},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) corev1.ConditionStatus {
	for _, c := range d.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// expectAvailable waits until the Deployment is Available with all its replicas ready, on
// pods bound to simulated nodes.
func expectAvailable(ctx context.Context, g Gomega, client kubernetes.Interface, ns, name string, replicas int32) {
	g.Eventually(func(g Gomega) {
		d, err := client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(deploymentCondition(d, appsv1.DeploymentAvailable)).To(Equal(corev1.ConditionTrue))
		g.Expect(d.Status.ReadyReplicas).To(Equal(replicas))
		g.Expect(d.Status.AvailableReplicas).To(Equal(replicas))
	}).WithTimeout(deploymentTimeout).Should(Succeed())
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pods.Items).To(HaveLen(int(replicas)))
	for _, pod := range pods.Items {
		g.Expect(pod.Spec.NodeName).To(HavePrefix("kwok-node-"))
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
		g.Expect(pod.Status.PodIP).NotTo(BeEmpty())
	}
}

// TestSimulatedNodes runs a control plane with kube-controller-manager and two simulated nodes
// through its life: workloads become healthy or, annotated, fail; a restart of the API server
// brings the nodes back; Stop stops kube-scheduler and kwok too.
func TestSimulatedNodes(t *testing.T) {
	requireBinaries(t)
	g := NewWithT(t)
	ctx := t.Context()

	began := time.Now()
	c, err := Start(ctx, Options{Name: "nodes", ControllerManager: true, Nodes: 2})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = c.Stop() })
	t.Logf("Started etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok with 2 nodes in %s", time.Since(began).Round(time.Millisecond))
	logRSS(t, c)
	g.Expect(c.PIDs()).To(HaveLen(5))
	admin := newClient(g, c.Kubeconfig())

	t.Run("the nodes are Ready and schedulable", func(t *testing.T) {
		g := NewWithT(t)
		nodes, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(nodes.Items).To(HaveLen(2))
		for _, node := range nodes.Items {
			g.Expect(node.Name).To(Or(Equal(NodeName(0)), Equal(NodeName(1))))
			g.Expect(nodeReady(&node)).To(BeTrue(), "node %s is Ready", node.Name)
			g.Expect(node.Spec.Unschedulable).To(BeFalse())
			g.Expect(node.Status.Allocatable).To(HaveKey(corev1.ResourcePods))
		}
	})

	t.Run("a Deployment becomes Available", func(t *testing.T) {
		g := NewWithT(t)
		ns := createNamespace(ctx, g, admin)
		_, err := admin.AppsV1().Deployments(ns).Create(ctx, newDeployment(ns, "web", 2, nil), metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		began := time.Now()
		expectAvailable(ctx, g, admin, ns, "web", 2)
		t.Logf("Deployment with 2 replicas Available in %s", time.Since(began).Round(time.Millisecond))
	})

	t.Run("a Deployment whose pods are annotated to fail does not", func(t *testing.T) {
		g := NewWithT(t)
		ns := createNamespace(ctx, g, admin)
		failing := newDeployment(ns, "broken", 2, map[string]string{SimulateFailureAnnotation: "true"})
		_, err := admin.AppsV1().Deployments(ns).Create(ctx, failing, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		// The pods show the failure as a crash-looping pod on a real node does.
		g.Eventually(func(g Gomega) {
			pods, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=broken"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods.Items).To(HaveLen(2))
			for _, pod := range pods.Items {
				g.Expect(pod.Spec.NodeName).To(HavePrefix("kwok-node-"))
				g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
				g.Expect(pod.Status.ContainerStatuses).To(ConsistOf(And(
					HaveField("Ready", BeFalse()),
					HaveField("RestartCount", BeNumerically(">", 0)),
					HaveField("State.Waiting.Reason", "CrashLoopBackOff"),
					HaveField("State.Waiting.Message", ContainSubstring(SimulateFailureAnnotation)),
					HaveField("LastTerminationState.Terminated.ExitCode", BeEquivalentTo(1)),
				)))
				g.Expect(pod.Status.Conditions).To(ContainElement(And(
					HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionFalse))))
			}
		}).WithTimeout(deploymentTimeout).Should(Succeed())
		// And the Deployment stays unavailable.
		g.Consistently(func(g Gomega) {
			d, err := admin.AppsV1().Deployments(ns).Get(ctx, "broken", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Status.ReadyReplicas).To(BeZero())
			g.Expect(d.Status.AvailableReplicas).To(BeZero())
			g.Expect(deploymentCondition(d, appsv1.DeploymentAvailable)).NotTo(Equal(corev1.ConditionTrue))
		}).WithTimeout(5 * time.Second).Should(Succeed())
	})

	t.Run("an annotated pod that never restarts ends Failed", func(t *testing.T) {
		g := NewWithT(t)
		ns := createNamespace(ctx, g, admin)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: ns, Annotations: map[string]string{SimulateFailureAnnotation: "true"}},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "once", Image: "registry.k8s.io/pause:3.10"}},
			},
		}
		_, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Eventually(func(g Gomega) {
			pod, err := admin.CoreV1().Pods(ns).Get(ctx, "once", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodFailed))
			g.Expect(pod.Status.ContainerStatuses).To(ConsistOf(And(
				HaveField("Ready", BeFalse()),
				HaveField("State.Terminated.ExitCode", BeEquivalentTo(1)),
				HaveField("State.Terminated.Message", ContainSubstring(SimulateFailureAnnotation)),
			)))
		}).WithTimeout(deploymentTimeout).Should(Succeed())
	})

	t.Run("after an API server restart the nodes are managed again", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(c.StopAPIServer()).To(Succeed())
		g.Expect(c.PIDs()).To(HaveLen(1), "only etcd keeps running")
		began := time.Now()
		g.Expect(c.StartAPIServer(ctx)).To(Succeed())
		t.Logf("Restarted kube-apiserver, kube-controller-manager, kube-scheduler and kwok in %s", time.Since(began).Round(time.Millisecond))
		g.Expect(c.PIDs()).To(HaveLen(5))
		ns := createNamespace(ctx, g, admin)
		_, err := admin.AppsV1().Deployments(ns).Create(ctx, newDeployment(ns, "again", 2, nil), metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		expectAvailable(ctx, g, admin, ns, "again", 2)
	})

	t.Run("Stop stops kube-scheduler and kwok too", func(t *testing.T) {
		g := NewWithT(t)
		pids := c.PIDs()
		g.Expect(pids).To(HaveLen(5))
		g.Expect(c.Stop()).To(Succeed())
		g.Expect(livePIDs(pids)).To(BeEmpty())
		g.Expect(c.PIDs()).To(BeEmpty())
	})
}

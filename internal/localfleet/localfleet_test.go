package localfleet

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	. "github.com/onsi/gomega"

	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/testsupport"
)

func TestUpRejectsNegativeNodes(t *testing.T) {
	g := NewWithT(t)
	f, err := Up(t.Context(), Options{Clusters: 1, Nodes: -1})
	g.Expect(f).To(BeNil())
	g.Expect(err).To(MatchError(ContainSubstring("nodes must not be negative")))
}

// TestUpWithNodes checks that Options.Nodes gives every target, and not the hub, simulated
// nodes on which a Deployment becomes Available, and that Stop stops their processes too.
func TestUpWithNodes(t *testing.T) {
	testsupport.RequireBinaries(t)
	g := NewWithT(t)
	ctx := t.Context()

	began := time.Now()
	f, err := Up(ctx, Options{Clusters: 1, Nodes: 2})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = f.Stop() })
	t.Logf("Hub and one target with 2 simulated nodes up in %s", time.Since(began).Round(time.Millisecond))

	hubNodes, err := kubernetes.NewForConfigOrDie(f.Hub.RESTConfig()).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hubNodes.Items).To(BeEmpty(), "the hub has no nodes")

	target := kubernetes.NewForConfigOrDie(f.Targets[0].RESTConfig())
	nodes, err := target.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nodes.Items).To(ConsistOf(HaveField("Name", sandbox.NodeName(0)), HaveField("Name", sandbox.NodeName(1))))

	replicas := int32(2)
	labels := map[string]string{"app": "web"}
	_, err = target.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		d, err := target.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(d.Status.Conditions).To(ContainElement(And(
			HaveField("Type", appsv1.DeploymentAvailable), HaveField("Status", corev1.ConditionTrue))))
		g.Expect(d.Status.ReadyReplicas).To(Equal(replicas))
	}).WithTimeout(60 * time.Second).Should(Succeed())

	pids := append(f.Hub.PIDs(), f.Targets[0].PIDs()...)
	g.Expect(pids).To(HaveLen(2 + 5))
	g.Expect(f.Stop()).To(Succeed())
	for _, pid := range pids {
		g.Expect(sandbox.ProcessAlive(pid)).To(BeFalse(), "pid %d stopped", pid)
	}
}

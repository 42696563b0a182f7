package sandbox

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	. "github.com/onsi/gomega"
)

func newClient(g Gomega, kubeconfig []byte) kubernetes.Interface {
	config, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	client, err := kubernetes.NewForConfig(config)
	g.Expect(err).NotTo(HaveOccurred())
	return client
}

func createNamespace(ctx context.Context, g Gomega, client kubernetes.Interface) string {
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sandbox-test-"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return ns.Name
}

// TestControlPlane runs one control plane with kube-controller-manager through its whole life,
// in order: a cluster start costs seconds, so the steps share it.
func TestControlPlane(t *testing.T) {
	requireBinaries(t)
	g := NewWithT(t)
	ctx := t.Context()

	began := time.Now()
	c, err := Start(ctx, Options{Name: "member", ControllerManager: true})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = c.Stop() })
	t.Logf("Started etcd, kube-apiserver and kube-controller-manager in %s", time.Since(began).Round(time.Millisecond))
	logRSS(t, c)
	g.Expect(c.PIDs()).To(HaveLen(3))
	g.Expect(c.Host()).To(HavePrefix("https://127.0.0.1:"))

	admin := newClient(g, c.Kubeconfig())

	t.Run("admin kubeconfig reaches the expected version", func(t *testing.T) {
		g := NewWithT(t)
		config, err := clientcmd.Load(c.Kubeconfig())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(config.CurrentContext).To(Equal("member"))
		g.Expect(config.Clusters["member"].CertificateAuthorityData).To(Equal(c.CACert()))

		fromFile, err := os.ReadFile(c.KubeconfigPath())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(fromFile).To(Equal(c.Kubeconfig()))

		version, err := admin.Discovery().ServerVersion()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(version.GitVersion).To(Equal("v" + KubernetesVersion))

		viaRESTConfig, err := kubernetes.NewForConfig(c.RESTConfig())
		g.Expect(err).NotTo(HaveOccurred())
		_, err = viaRESTConfig.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	})

	t.Run("controller manager turns a Deployment into a ReplicaSet", func(t *testing.T) {
		g := NewWithT(t)
		ns := createNamespace(ctx, g, admin)
		labels := map[string]string{"app": "web"}
		deployment := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}},
				},
			},
		}
		_, err := admin.AppsV1().Deployments(ns).Create(ctx, deployment, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Eventually(func(g Gomega) {
			list, err := admin.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(list.Items).To(HaveLen(1))
			g.Expect(list.Items[0].OwnerReferences).To(ContainElement(HaveField("Name", "web")))
		}).WithTimeout(30 * time.Second).Should(Succeed())
	})

	t.Run("namespace deletion finishes", func(t *testing.T) {
		g := NewWithT(t)
		ns := createNamespace(ctx, g, admin)
		_, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "content"}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(admin.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})).To(Succeed())
		g.Eventually(func() error {
			_, err := admin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return err
		}).WithTimeout(30 * time.Second).Should(Satisfy(apierrors.IsNotFound))
	})

	t.Run("user kubeconfig authenticates the user, and RBAC applies", func(t *testing.T) {
		g := NewWithT(t)
		kubeconfig, err := c.KubeconfigForUser("alice", "team-a")
		g.Expect(err).NotTo(HaveOccurred())
		alice := newClient(g, kubeconfig)

		review, err := alice.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(review.Status.UserInfo.Username).To(Equal("alice"))
		g.Expect(review.Status.UserInfo.Groups).To(ContainElements("team-a", "system:authenticated"))

		_, err = alice.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing secrets without a binding: %v", err)
	})

	t.Run("API server restarts on the same address with its data", func(t *testing.T) {
		g := NewWithT(t)
		ns := createNamespace(ctx, g, admin)
		_, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survivor"}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		host := c.Host()

		g.Expect(c.StopAPIServer()).To(Succeed())
		g.Expect(c.PIDs()).To(HaveLen(1), "only etcd keeps running")
		began := time.Now()
		_, err = admin.CoreV1().ConfigMaps(ns).Get(ctx, "survivor", metav1.GetOptions{})
		g.Expect(err).To(HaveOccurred())
		g.Expect(time.Since(began)).To(BeNumerically("<", 5*time.Second), "requests fail fast while stopped")

		began = time.Now()
		g.Expect(c.StartAPIServer(ctx)).To(Succeed())
		t.Logf("Restarted kube-apiserver and kube-controller-manager in %s", time.Since(began).Round(time.Millisecond))
		g.Expect(c.Host()).To(Equal(host))
		g.Expect(c.PIDs()).To(HaveLen(3))
		// The same client, unchanged, works again: the address did not move.
		_, err = admin.CoreV1().ConfigMaps(ns).Get(ctx, "survivor", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	})

	t.Run("Stop leaves no process and no directory", func(t *testing.T) {
		g := NewWithT(t)
		pids := c.PIDs()
		g.Expect(pids).To(HaveLen(3))
		g.Expect(c.Dir()).To(BeADirectory())
		began := time.Now()
		g.Expect(c.Stop()).To(Succeed())
		t.Logf("Stopped in %s", time.Since(began).Round(time.Millisecond))
		g.Expect(livePIDs(pids)).To(BeEmpty())
		g.Expect(c.PIDs()).To(BeEmpty())
		g.Expect(c.Dir()).NotTo(BeAnExistingFile())
		g.Expect(c.Stop()).To(Succeed(), "Stop is idempotent")
		g.Expect(c.StartAPIServer(ctx)).To(MatchError(errStopped))
	})
}

// TestStartMany starts two clusters at once and checks that they are separate clusters: each
// has its own address and CA, and one's credentials are rejected by the other. West is started
// without the admission policy APIs, and discovery shows them gone there only.
func TestStartMany(t *testing.T) {
	requireBinaries(t)
	g := NewWithT(t)
	ctx := t.Context()
	var logs syncBuffer
	dir := t.TempDir()

	began := time.Now()
	planes, err := StartMany(ctx, []Options{
		{Name: "east", Logs: &logs},
		{Name: "west", Dir: dir, Logs: &logs, DisableAdmissionPolicies: true},
	})
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range planes {
		t.Cleanup(func() { _ = c.Stop() })
	}
	t.Logf("Started two clusters (etcd and kube-apiserver each) in %s", time.Since(began).Round(time.Millisecond))
	logRSS(t, planes[0])
	east, west := planes[0], planes[1]
	g.Expect(east.Name()).To(Equal("east"))
	g.Expect(west.Dir()).To(Equal(dir))
	g.Expect(east.Host()).NotTo(Equal(west.Host()))
	g.Expect(east.CACert()).NotTo(Equal(west.CACert()))

	_, err = newClient(g, east.Kubeconfig()).CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	// East's admin certificate, presented to west (trusting west's CA), must be rejected.
	crossed := west.RESTConfig()
	crossed.TLSClientConfig.CertData = east.RESTConfig().TLSClientConfig.CertData
	crossed.TLSClientConfig.KeyData = east.RESTConfig().TLSClientConfig.KeyData
	crossedClient, err := kubernetes.NewForConfig(crossed)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = crossedClient.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	g.Expect(apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)).To(BeTrue(), "cross-cluster credentials: %v", err)

	g.Expect(admissionResources(g, east)).To(ContainElements("mutatingadmissionpolicies", "mutatingadmissionpolicybindings",
		"validatingadmissionpolicies", "validatingadmissionpolicybindings", "validatingwebhookconfigurations"))
	g.Expect(admissionResources(g, west)).To(And(ContainElements("validatingwebhookconfigurations", "mutatingwebhookconfigurations"),
		Not(ContainElement(ContainSubstring("admissionpolic")))), "DisableAdmissionPolicies switches off the policies only")

	g.Expect(logs.String()).To(ContainSubstring("[east/kube-apiserver] "))
	g.Expect(logs.String()).To(ContainSubstring("[west/kube-apiserver] "))
	entries, err := os.ReadDir(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == "logs" })).To(BeFalse(), "with Options.Logs no log files are written")

	g.Expect(west.Stop()).To(Succeed())
	g.Expect(dir).To(BeADirectory(), "a caller's Dir is left in place")
}

func TestStartRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{name: "no name", opts: Options{}, want: "Name is required"},
		{name: "name with a path separator", opts: Options{Name: "a/b"}, want: "path separator"},
		{name: "negative nodes", opts: Options{Name: "x", Nodes: -1}, want: "Nodes must not be negative"},
		{name: "no binaries", opts: Options{Name: "x", BinaryDir: "/nonexistent"}, want: "make control-plane"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c, err := Start(t.Context(), tt.opts)
			g.Expect(c).To(BeNil())
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}

func TestBinaryDirNamesTheMakeTarget(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("HOLDFAST_BIN_DIR", t.TempDir())
	_, err := BinaryDir()
	g.Expect(err).To(MatchError(ContainSubstring("make control-plane")))
	g.Expect(strings.Contains(err.Error(), "etcd")).To(BeTrue())
}

// admissionResources lists the resources c serves in admissionregistration.k8s.io/v1.
func admissionResources(g Gomega, c *ControlPlane) []string {
	list, err := newClient(g, c.Kubeconfig()).Discovery().ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1")
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name)
	}
	return names
}

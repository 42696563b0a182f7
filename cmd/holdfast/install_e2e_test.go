package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/install"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/testsupport"
)

// The chart's ServiceAccount, as the default release names it.
const (
	releaseNamespace = install.DefaultNamespace
	serviceAccount   = "system:serviceaccount:" + releaseNamespace + ":holdfast"
)

// TestChartInstallsAWorkingController installs Holdfast on a bare hub with `holdfast install`
// (the chart's manifests, server-side applied through the hub's API server), then runs
// `holdfast controller` in this process with the exact arguments of the Deployment on the hub,
// its kubeconfig impersonating the chart's ServiceAccount: the controller has only what the
// chart's RBAC grants. It must elect itself leader through the chart's Role, serve the probes and
// metrics the chart points at, deploy a service to a target cluster and put back a change made
// there; and it must be refused what the chart does not grant. The metrics are HTTPS and only
// for a token the hub authorizes to read them, as with the chart's holdfast-metrics-reader
// ClusterRole: the controller checks tokens with the hub as the chart's ServiceAccount.
func TestChartInstallsAWorkingController(t *testing.T) {
	testsupport.RequireBinaries(t)
	g := NewWithT(t)
	ctx := t.Context()
	began := time.Now()
	planes, err := sandbox.StartMany(ctx, []sandbox.Options{{Name: "hub"}, {Name: "target"}})
	if err != nil {
		t.Fatal(err)
	}
	hubPlane, target := planes[0], planes[1]
	t.Cleanup(func() { _ = target.Stop(); _ = hubPlane.Stop() })
	scheme, err := controller.Scheme()
	g.Expect(err).NotTo(HaveOccurred())
	hub, err := client.New(hubPlane.RESTConfig(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	targetClient, err := client.New(target.RESTConfig(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("Started a hub and a target in %s", time.Since(began).Round(time.Millisecond))

	// Install with `holdfast install`, with free ports for the metrics and probes, since the
	// controller runs on this machine rather than in a pod.
	metricsPort, healthPort := freePort(t), freePort(t)
	set := fmt.Sprintf("metrics.port=%d,health.port=%d", metricsPort, healthPort)
	out, err := runHoldfast(ctx, "install", "--kubeconfig", hubPlane.KubeconfigPath(), "--set", set)
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("holdfast install --set %s:\n%s", set, out)
	manifests, err := install.Manifests(ctx, install.Options{Values: map[string]any{
		"metrics": map[string]any{"port": metricsPort}, "health": map[string]any{"port": healthPort},
	}})
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := install.Objects(manifests)
	g.Expect(err).NotTo(HaveOccurred())
	for _, o := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(o), got)).To(Succeed(), "%s %s on the hub", o.GetKind(), o.GetName())
		g.Expect(got.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/part-of", "holdfast"), "%s %s", o.GetKind(), o.GetName())
	}
	// Installing again upgrades in place: only what the values change is written.
	out, err = runHoldfast(ctx, "install", "--kubeconfig", hubPlane.KubeconfigPath(), "--set", set+",replicas=3")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(And(ContainSubstring("Deployment/holdfast-system/holdfast-controller configured"),
		ContainSubstring("CustomResourceDefinition/holdfastclusters.holdfast.dev unchanged"), Not(ContainSubstring("created"))), out)
	deployment := &appsv1.Deployment{}
	g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: "holdfast-controller"}, deployment)).To(Succeed())
	g.Expect(deployment.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)))
	expectPodAdmitted(ctx, t, hub, deployment)

	// Run the controller as the chart's Deployment would, as the chart's ServiceAccount, with
	// the namespace the downward API gives the pod.
	args := deployment.Spec.Template.Spec.Containers[0].Args
	for _, env := range deployment.Spec.Template.Spec.Containers[0].Env {
		if env.ValueFrom != nil && env.ValueFrom.FieldRef != nil && env.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			t.Setenv(env.Name, releaseNamespace)
		}
	}
	kubeconfig := impersonatingKubeconfig(t, hubPlane, serviceAccount, "system:serviceaccounts", "system:serviceaccounts:"+releaseNamespace)
	stop := startControllerCommand(t, append(args, "--kubeconfig", kubeconfig))
	defer stop()
	eventually(t, func(g Gomega) {
		lease := &coordinationv1.Lease{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: "holdfast.dev"}, lease)).To(Succeed())
		g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Not(BeEmpty())))
	})
	for _, path := range []string{"/healthz", "/readyz"} {
		eventually(t, func(g Gomega) { g.Expect(httpGet(ctx, healthPort, path)).To(ContainSubstring("ok")) })
	}

	// Two scrapers, as Prometheus would be: one bound to the chart's holdfast-metrics-reader
	// ClusterRole as docs/metrics.md says, one not. Bound now, so that the hub's RBAC knows the
	// binding by the time the controller asks it about the token.
	g.Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "monitoring"}})).To(Succeed())
	readerToken, strangerToken := serviceAccountToken(t, hub, "monitoring", "prometheus"), serviceAccountToken(t, hub, "monitoring", "stranger")
	g.Expect(hub.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "prometheus-holdfast-metrics"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "holdfast-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "monitoring", Name: "prometheus"}}})).To(Succeed())
	eventually(t, func(g Gomega) {
		code, body, err := scrape(ctx, metricsPort, "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusUnauthorized), "without a token: %s", body)
	})
	code, body, err := scrape(ctx, metricsPort, strangerToken)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusForbidden), "with the token of a ServiceAccount not bound to holdfast-metrics-reader: %s", body)
	g.Expect(body).To(ContainSubstring("system:serviceaccount:monitoring:stranger"))
	// A token the hub rejects is refused too; controller-runtime's filter answers 500 rather than
	// 401 when the TokenReview says why (here "invalid bearer token").
	code, body, err = scrape(ctx, metricsPort, "not-a-token")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(BeElementOf(http.StatusUnauthorized, http.StatusInternalServerError), "with a token the hub does not know: %s", body)
	g.Expect(body).NotTo(ContainSubstring("holdfast_"))
	_, err = httpGet(ctx, metricsPort, "/metrics")
	g.Expect(err).To(HaveOccurred(), "plain HTTP metrics")

	// A target registered in a tenant's namespace, and a service in drift-detection mode from a
	// template of the platform namespace (by default the controller's own), selecting Clusters
	// there and in the namespace it lists.
	_, err = fleet.Register(ctx, hub, fleet.Registration{Namespace: "tenant-a", Name: "target", Labels: map[string]string{"env": "dev"},
		Kubeconfig: target.Kubeconfig()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "templates"}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: "web"},
		Spec: holdfastv1.ServiceTemplateSpec{Inline: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: web\ndata:\n  logLevel: info\n"}})).To(Succeed())
	g.Expect(hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "platform"},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}},
				Namespaces: []string{releaseNamespace, "tenant-a"}},
			SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
			Services: []holdfastv1.Service{{Name: "web", Template: holdfastv1.TemplateReference{Namespace: releaseNamespace, Name: "web"}}},
		}})).To(Succeed())
	deployed := time.Now()
	settings := client.ObjectKey{Namespace: "web", Name: "settings"}
	eventually(t, func(g Gomega) {
		cm := &corev1.ConfigMap{}
		g.Expect(targetClient.Get(ctx, settings, cm)).To(Succeed())
		g.Expect(cm.Data).To(HaveKeyWithValue("logLevel", "info"))
	})
	eventually(t, func(g Gomega) {
		css := &holdfastv1.ClusterServiceStatus{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: "tenant-a", Name: naming.StatusName("platform", "target")}, css)).To(Succeed())
		g.Expect(meta(css.Status.Conditions, holdfastv1.ReadyCondition)).To(Equal(metav1.ConditionTrue), "%+v", css.Status.Conditions)
	})
	t.Logf("The service was deployed and Ready %s after it was declared", time.Since(deployed).Round(time.Millisecond))

	// Drift: someone edits the ConfigMap on the target; the controller puts it back.
	edited := time.Now()
	eventually(t, func(g Gomega) {
		cm := &corev1.ConfigMap{}
		g.Expect(targetClient.Get(ctx, settings, cm)).To(Succeed())
		cm.Data["logLevel"] = "debug"
		g.Expect(targetClient.Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		cm := &corev1.ConfigMap{}
		g.Expect(targetClient.Get(ctx, settings, cm)).To(Succeed())
		g.Expect(cm.Data).To(HaveKeyWithValue("logLevel", "info"))
	})
	t.Logf("The drift was corrected %s after the edit", time.Since(edited).Round(time.Millisecond))
	eventually(t, func(g Gomega) {
		code, body, err := scrape(ctx, metricsPort, readerToken)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK), "with the token of a ServiceAccount bound to holdfast-metrics-reader: %s", body)
		g.Expect(body).To(And(
			ContainSubstring(`holdfast_managed_objects{cluster="tenant-a/target",multiclusterservice="platform"} 2`),
			ContainSubstring(`holdfast_drifts_corrected_total{cluster="tenant-a/target"`)))
	})

	// What the chart does not grant is refused.
	sa, err := client.New(impersonating(hubPlane.RESTConfig(), serviceAccount, "system:serviceaccounts", "system:serviceaccounts:"+releaseNamespace),
		client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	expectForbidden(t, "patching a Secret", sa.Patch(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: fleet.KubeconfigSecretName("target")}},
		client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"x":"y"}}}`))))
	expectForbidden(t, "updating a Secret outside the release namespace", sa.Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Namespace: "tenant-a", Name: fleet.KubeconfigSecretName("target")}, Data: map[string][]byte{"value": []byte("x")}}, client.DryRunAll))
	expectForbidden(t, "creating a Secret outside the release namespace", sa.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Namespace: "tenant-a", Name: "planted"}, Type: corev1.SecretTypeServiceAccountToken}, client.DryRunAll))
	expectForbidden(t, "reading a ServiceAccount token", sa.SubResource("token").Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: "holdfast"}}, &authenticationv1.TokenRequest{}))
	expectForbidden(t, "listing Pods", sa.List(ctx, &corev1.PodList{}))
	expectForbidden(t, "creating a Deployment on the hub", sa.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "templates", Name: "x"},
		Spec: deployment.Spec}, client.DryRunAll))
	expectForbidden(t, "taking a Lease outside the release namespace", sa.Create(ctx,
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "holdfast.dev"}}, client.DryRunAll))
	expectForbidden(t, "granting itself more", sa.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "escalate"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: releaseNamespace, Name: "holdfast"}}}, client.DryRunAll))
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	crd.SetName("holdfastclusters.holdfast.dev")
	expectForbidden(t, "deleting a CRD", sa.Delete(ctx, crd, client.DryRunAll))
	// Reading Secrets is granted everywhere on the hub: a Cluster in any namespace names its
	// kubeconfig Secret, and the controller watches Secrets (metadata only) to notice changes.
	// Writing them only in the release namespace, where it keeps rendered Helm services.
	g.Expect(sa.Get(ctx, client.ObjectKey{Namespace: "tenant-a", Name: fleet.KubeconfigSecretName("target")}, &corev1.Secret{})).To(Succeed())
	g.Expect(sa.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: "kept"}, Type: "holdfast.dev/renderings"},
		client.DryRunAll)).To(Succeed())
	t.Logf("Whole test: %s", time.Since(began).Round(time.Millisecond))
}

func eventually(t *testing.T, f func(g Gomega)) {
	t.Helper()
	NewWithT(t).Eventually(f).WithTimeout(90 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func httpGet(ctx context.Context, port int, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", port, path), nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: HTTP %d: %s", path, resp.StatusCode, body)
	}
	return string(body), err
}

// scrape GETs /metrics over HTTPS from the controller on this machine, with token as the bearer
// token unless it is empty, and returns the status code and the body. The certificate is the
// self-signed one the controller makes, which Prometheus, too, is told not to verify.
func scrape(ctx context.Context, port int, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the controller's self-signed certificate
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// serviceAccountToken creates ServiceAccount namespace/name on the hub and returns a token of it
// (TokenRequest, as the kubelet gets a pod's).
func serviceAccountToken(t *testing.T, c client.Client, namespace, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := c.Create(t.Context(), sa); err != nil {
		t.Fatal(err)
	}
	tr := &authenticationv1.TokenRequest{}
	if err := c.SubResource("token").Create(t.Context(), sa, tr); err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// meta returns the status of condition typ, or "" when there is none.
func meta(conds []metav1.Condition, typ string) metav1.ConditionStatus {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// impersonating is cfg acting as user in groups, as `kubectl --as --as-group` does.
func impersonating(cfg *rest.Config, user string, groups ...string) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return cfg
}

// impersonatingKubeconfig writes a kubeconfig of the hub whose every user impersonates user in
// groups, and returns its path.
func impersonatingKubeconfig(t *testing.T, cp *sandbox.ControlPlane, user string, groups ...string) string {
	t.Helper()
	kc, err := clientcmd.Load(cp.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range kc.AuthInfos {
		ai.Impersonate, ai.ImpersonateGroups = user, groups
	}
	path := filepath.Join(t.TempDir(), "impersonating.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// expectPodAdmitted creates the Deployment's pod, as its ReplicaSet would (server-side dry run),
// in the release namespace, which the chart labels to enforce the restricted Pod Security
// Standard: the API server's PodSecurity admission refuses a pod that breaks it.
func expectPodAdmitted(ctx context.Context, t *testing.T, c client.Client, d *appsv1.Deployment) {
	t.Helper()
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: d.Namespace}, ns); err != nil {
		t.Fatal(err)
	}
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Fatalf("namespace %s does not enforce the restricted Pod Security Standard: %v", d.Namespace, ns.Labels)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, GenerateName: d.Name + "-", Labels: d.Spec.Template.Labels},
		Spec: d.Spec.Template.Spec}
	if err := c.Create(ctx, pod, client.DryRunAll); err != nil {
		t.Fatalf("the chart's pod is not admitted: %v", err)
	}
	bad := pod.DeepCopy()
	bad.Spec.Containers[0].SecurityContext.Capabilities = nil
	if err := c.Create(ctx, bad, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "PodSecurity") {
		t.Fatalf("a pod keeping its capabilities is admitted (%v): the namespace's Pod Security admission proves nothing", err)
	}
}

func expectForbidden(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s as the chart's ServiceAccount: %v, want Forbidden", what, err)
	}
}

// startControllerCommand runs `holdfast <args>` in this process until the returned function
// stops it. The controller logs to standard error, which is a file meanwhile: stop fails the
// test if any request of the controller was forbidden (a missing permission can show only
// there, as with an Event the API server refuses), and shows the logs when the test failed.
func startControllerCommand(t *testing.T, args []string) (stop func()) {
	t.Helper()
	logs, err := os.Create(filepath.Join(t.TempDir(), "controller.log"))
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = logs // read when the command sets its logger up, before it returns from Execute
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := runHoldfast(ctx, args...)
		done <- err
	}()
	t.Logf("Started holdfast %s", strings.Join(args, " "))
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("holdfast controller: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("holdfast controller did not stop within 30s")
		}
		os.Stderr = stderr
		_ = logs.Close()
		data, err := os.ReadFile(logs.Name())
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			if strings.Contains(line, "forbidden") {
				t.Errorf("the controller was refused a request: %s", line)
			}
		}
		if t.Failed() {
			t.Logf("Controller logs:\n%s", data)
		}
	}
}

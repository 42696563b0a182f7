package clusterservicestatus_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/chartserver"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/rendercache"
)

// TestGeneratedValuesStayStable: a chart whose templates generate a password, UUIDs, a CA and
// keys is rendered once per revision of its inputs. Requested full reconciles and a controller
// restart leave the Secret and the ConfigMap on the target untouched; a change of the service's
// values renders it again, once, with new generated values, which then stay.
func TestGeneratedValuesStayStable(t *testing.T) {
	const cluster = "cluster-1"
	name, ns := objName(t, ""), objName(t, "ns")
	g := NewWithT(t)
	ctx := context.Background()
	target := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	g.Expect(targets[cluster].Create(ctx, target)).To(Succeed())
	t.Cleanup(func() { _ = targets[cluster].Delete(context.Background(), target) })

	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{
		Helm: &holdfastv1.HelmSource{RepoURL: repo.URL(), Chart: chartserver.GeneratedChartName, Version: "1.0.0"},
	})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("gen", name, ns)},
	})
	expectReady(t, name, cluster)
	var secret corev1.Secret
	var identity corev1.ConfigMap
	eventually(t, func(g Gomega) {
		g.Expect(targets[cluster].Get(ctx, client.ObjectKey{Namespace: ns, Name: "gen-credentials"}, &secret)).To(Succeed())
		g.Expect(targets[cluster].Get(ctx, client.ObjectKey{Namespace: ns, Name: "gen-identity"}, &identity)).To(Succeed())
	})
	g.Expect(secret.Data).To(HaveKey("password"))
	g.Expect(string(secret.Data["ca.crt"])).To(HavePrefix("-----BEGIN CERTIFICATE-----"))
	g.Expect(string(secret.Data["signing.key"])).To(ContainSubstring("PRIVATE KEY"))
	g.Expect(identity.Data).To(HaveKey("instanceID"))
	secretWrites := countWrites(t, cluster, "secrets", ns, "gen-credentials", secret.ResourceVersion)
	identityWrites := countWrites(t, cluster, "configmaps", ns, "gen-identity", identity.ResourceVersion)

	// unchanged waits for a full reconcile requested with token and checks that neither object
	// was written since want was read.
	unchanged := func(token string, wantSecret *corev1.Secret, wantIdentity *corev1.ConfigMap) {
		t.Helper()
		requestCorrection(t, name, token)
		eventually(t, func(g Gomega) {
			css := statusOf(g, name, cluster)
			g.Expect(css.Status.LastHandledReconcileAt).To(Equal(token))
			g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		}, "full reconcile %s", token)
		var s corev1.Secret
		var c corev1.ConfigMap
		g.Expect(targets[cluster].Get(ctx, client.ObjectKey{Namespace: ns, Name: "gen-credentials"}, &s)).To(Succeed())
		g.Expect(targets[cluster].Get(ctx, client.ObjectKey{Namespace: ns, Name: "gen-identity"}, &c)).To(Succeed())
		g.Expect(s.ResourceVersion).To(Equal(wantSecret.ResourceVersion), "the Secret was written by full reconcile %s", token)
		g.Expect(s.Data).To(Equal(wantSecret.Data), "the Secret's generated values changed in full reconcile %s", token)
		g.Expect(c.ResourceVersion).To(Equal(wantIdentity.ResourceVersion), "the ConfigMap was written by full reconcile %s", token)
		g.Expect(c.Data).To(Equal(wantIdentity.Data), "the ConfigMap's generated values changed in full reconcile %s", token)
	}

	t.Log("Requested full reconciles change nothing")
	for _, token := range []string{"first", "second", "third"} {
		unchanged(token, &secret, &identity)
	}
	t.Log("Nor does a controller restart")
	restartManager(t)
	unchanged("after-restart", &secret, &identity)
	g.Expect(secretWrites()).To(BeZero(), "writes of the Secret before the input changed")
	g.Expect(identityWrites()).To(BeZero(), "writes of the ConfigMap before the input changed")

	t.Log("A change of the service's values renders the service again, once")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) { m.Spec.Services[0].Values = "greeting: changed\n" })
	var secret2 corev1.Secret
	var identity2 corev1.ConfigMap
	eventually(t, func(g Gomega) {
		g.Expect(targets[cluster].Get(ctx, client.ObjectKey{Namespace: ns, Name: "gen-identity"}, &identity2)).To(Succeed())
		g.Expect(identity2.Data).To(HaveKeyWithValue("greeting", "changed"))
		g.Expect(targets[cluster].Get(ctx, client.ObjectKey{Namespace: ns, Name: "gen-credentials"}, &secret2)).To(Succeed())
		g.Expect(secret2.ResourceVersion).NotTo(Equal(secret.ResourceVersion))
		css := statusOf(g, name, cluster)
		m := &holdfastv1.MultiClusterService{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Name: name}, m)).To(Succeed())
		g.Expect(css.Status.ObservedServiceSetGeneration).To(Equal(m.Generation))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	})
	for _, key := range []string{"password", "ca.crt", "ca.key", "signing.key"} {
		g.Expect(secret2.Data[key]).NotTo(Equal(secret.Data[key]), "Secret key %s after the values changed", key)
	}
	for _, key := range []string{"instanceID", "token"} {
		g.Expect(identity2.Data[key]).NotTo(Equal(identity.Data[key]), "ConfigMap key %s after the values changed", key)
	}
	for _, token := range []string{"fourth", "fifth"} {
		unchanged(token, &secret2, &identity2)
	}
	g.Expect(secretWrites()).To(Equal(int64(1)), "writes of the Secret after one change of input")
	g.Expect(identityWrites()).To(Equal(int64(1)), "writes of the ConfigMap after one change of input")

	t.Log("The rendering is kept in a Secret on the hub, in the controller's namespace, for the status object, and never logged")
	css := statusOf(g, name, cluster)
	kept := &corev1.Secret{}
	g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: controller.LocalNamespace, Name: css.Namespace + "." + css.Name + "-render"}, kept)).To(Succeed())
	g.Expect(kept.Labels).To(HaveKeyWithValue(rendercache.RenderingsOfUIDLabel, string(css.UID)))
	g.Expect(kept.Data).To(HaveKey("gen"))
	for _, v := range []string{string(secret.Data["password"]), string(secret2.Data["password"])} {
		g.Expect(strings.Contains(logs.String(), v)).To(BeFalse(), "a generated password is in the controller's log")
	}

	t.Log("It goes with the service set")
	deleteServiceSet(t, name)
	eventually(t, func(g Gomega) {
		g.Expect(apiNotFound(hub.Get(ctx, client.ObjectKeyFromObject(kept), &corev1.Secret{}))).To(BeTrue(), "render Secret still exists")
	})
}

// countWrites watches one object on a target from resourceVersion rv and returns a function
// that tells how many times it was modified since. A watch sees every write, where polling
// might miss one.
func countWrites(t *testing.T, cluster, resource, ns, name, rv string) func() int64 {
	t.Helper()
	var cfg = fl.Targets[0].RESTConfig()
	for _, tp := range fl.Targets {
		if tp.Name() == cluster {
			cfg = tp.RESTConfig()
		}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client for %s: %v", cluster, err)
	}
	opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(), ResourceVersion: rv}
	var w watch.Interface
	switch resource {
	case "secrets":
		w, err = cs.CoreV1().Secrets(ns).Watch(context.Background(), opts)
	default:
		w, err = cs.CoreV1().ConfigMaps(ns).Watch(context.Background(), opts)
	}
	if err != nil {
		t.Fatalf("watching %s %s/%s on %s: %v", resource, ns, name, cluster, err)
	}
	t.Cleanup(w.Stop)
	var n atomic.Int64
	var closed atomic.Bool
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Modified {
				n.Add(1)
			}
		}
		closed.Store(true)
	}()
	return func() int64 {
		t.Helper()
		if closed.Load() {
			t.Fatalf("the watch of %s %s/%s on %s ended early", resource, ns, name, cluster)
		}
		return n.Load()
	}
}

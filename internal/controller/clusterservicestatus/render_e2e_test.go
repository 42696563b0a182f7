package clusterservicestatus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/metrics"
)

// renderRequests reads holdfast_render_cache_requests_total by result from the controller's
// registry.
func renderRequests(g Gomega) map[string]float64 {
	out := map[string]float64{}
	for _, result := range []string{metrics.RenderHit, metrics.RenderKept, metrics.RenderMiss} {
		out[result] = metricSeries(g, "holdfast_render_cache_requests_total", map[string]string{"result": result}).GetCounter().GetValue()
	}
	return out
}

// TestUnchangedInputsRenderNothing: a full reconcile whose inputs did not change renders
// nothing (the rendering kept in memory is applied); a change of anything the rendering reads —
// a referenced ConfigMap, the template, the Cluster's labels, the service's values — renders
// the service again, and the cluster gets the new rendering.
func TestUnchangedInputsRenderNothing(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	label := "render-" + name
	source := func(version string) map[string]string {
		return map[string]string{"manifest": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: %s\ndata:\n"+
			"  source: %q\n  label: '{{ index .Cluster.Labels %q }}'\n  tier: '{{ .Values.tier }}'\n  size: '{{ .Values.size }}'\n", ns, version, label)}
	}
	src := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: name + "-src"}, Data: source("1")}
	createHubObject(t, src)
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{
		Templating: holdfastv1.TemplatingGoTemplate,
		Resources:  []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceConfigMap, Name: name + "-src", Key: "manifest"}},
		Values:     "tier: bronze\nsize: s\n",
	})
	setClusterLabel(t, "cluster-1", label, "a")
	t.Cleanup(func() { setClusterLabel(t, "cluster-1", label, "") })
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuous,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	expectApp := func(source, label, tier, size string) {
		t.Helper()
		eventually(t, func(g Gomega) {
			g.Expect(getConfigMap(g, "cluster-1", ns, "app").Data).To(Equal(map[string]string{
				"source": source, "label": label, "tier": tier, "size": size}))
		})
	}
	expectApp("1", "a", "bronze", "s")

	// fullReconcile asks for a full reconcile and waits until it ran; it returns how the
	// renderings counted meanwhile moved.
	token := 0
	fullReconcile := func() map[string]float64 {
		t.Helper()
		before := renderRequests(NewWithT(t))
		requested, _ := queueCounts(NewWithT(t), "request", "")
		token++
		requestCorrection(t, name, fmt.Sprint(token))
		eventually(t, func(g Gomega) {
			g.Expect(statusOf(g, name, "cluster-1").Status.LastHandledReconcileAt).To(Equal(fmt.Sprint(token)))
		})
		after := renderRequests(NewWithT(t))
		// The reconcile is counted as brought by the request (holdfast_reconciles_total).
		requestedAfter, _ := queueCounts(NewWithT(t), "request", "")
		NewWithT(t).Expect(requestedAfter-requested).To(BeNumerically(">=", 1), "the requested reconcile was not counted as a request")
		moved := map[string]float64{}
		for _, result := range []string{"hit", "miss", "kept"} {
			moved[result] = after[result] - before[result]
		}
		return moved
	}

	t.Log("A full reconcile with nothing changed: taken from memory, nothing rendered")
	moved := fullReconcile()
	NewWithT(t).Expect(moved["hit"]).To(BeNumerically(">=", 1), "the full reconcile did not take the rendering from memory: %v", moved)
	NewWithT(t).Expect(moved["miss"]).To(BeZero(), "a full reconcile with nothing changed rendered: %v", moved)
	expectReady(t, name, "cluster-1")

	changes := []struct {
		what   string
		change func()
		app    [4]string
	}{
		{"the referenced ConfigMap", func() {
			eventually(t, func(g Gomega) {
				g.Expect(hub.Get(context.Background(), client.ObjectKeyFromObject(src), src)).To(Succeed())
				src.Data = source("2")
				g.Expect(hub.Update(context.Background(), src)).To(Succeed())
			})
		}, [4]string{"2", "a", "bronze", "s"}},
		{"the template", func() {
			updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) { tpl.Spec.Values = "tier: silver\nsize: s\n" })
		}, [4]string{"2", "a", "silver", "s"}},
		{"the Cluster's labels", func() { setClusterLabel(t, "cluster-1", label, "b") }, [4]string{"2", "b", "silver", "s"}},
		{"the service's values", func() {
			updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) { m.Spec.Services[0].Values = "size: m\n" })
		}, [4]string{"2", "b", "silver", "m"}},
	}
	for _, c := range changes {
		t.Logf("A change of %s renders again", c.what)
		before := renderRequests(NewWithT(t))
		c.change()
		expectApp(c.app[0], c.app[1], c.app[2], c.app[3])
		NewWithT(t).Expect(renderRequests(NewWithT(t))["miss"]-before["miss"]).To(BeNumerically(">=", 1), "no render counted after a change of %s", c.what)
		moved := fullReconcile()
		NewWithT(t).Expect(moved["miss"]).To(BeZero(), "after a change of %s, a full reconcile with nothing changed since rendered: %v", c.what, moved)
	}
	consistently(t, time.Second, func(g Gomega) {
		g.Expect(condition(statusOf(g, name, "cluster-1").Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	})
}

package main

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
)

// TestPullAgentCorrectsWhileItsHubIsSlow: an agent whose hub answers slowly (here its own
// client-side limit, one status patch a second) puts a drift back while the one before is still
// being recorded on the hub: no reconcile holds its status object waiting for that recording
// (issue 32, behaviour 3). Before, the reconcile that the agent's own status patch brought waited
// for the next recording, and a burst of edits was corrected 345 ms late each (bench/pull -gap).
func TestPullAgentCorrectsWhileItsHubIsSlow(t *testing.T) {
	f := startPullFleet(t)
	ctx, g, hub := t.Context(), NewWithT(t), f.hub
	f.stopAgent()
	runAgentOptions(t, f.agentOptions(t, f.edge.RESTConfig(), controller.Options{HubQPS: 1, HubBurst: 1}))

	statusKey := f.deployInline(t, "pair", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one, namespace: apps}\ndata: {v: declared}\n---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two, namespace: apps}\ndata: {v: declared}\n")
	// correctedOnHub counts the drift records of ConfigMap name the hub holds corrected.
	correctedOnHub := func(g Gomega, name string) int {
		css := &holdfastv1.ClusterServiceStatus{}
		g.Expect(hub.Get(ctx, statusKey, css)).To(Succeed())
		n := 0
		for _, d := range css.Status.Drifts {
			if d.Name == name && d.CorrectedTime != nil {
				n++
			}
		}
		return n
	}
	edit := func(name string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(f.edgeClient.Get(ctx, client.ObjectKey{Namespace: "apps", Name: name}, cm)).To(Succeed())
			cm.Data["v"] = "edited"
			g.Expect(f.edgeClient.Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())
		}).WithTimeout(30 * time.Second).Should(Succeed())
	}
	putBack := func(name string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(f.edgeClient.Get(ctx, client.ObjectKey{Namespace: "apps", Name: name}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("v", "declared"))
		}).WithTimeout(30*time.Second).WithPolling(5*time.Millisecond).Should(Succeed(), "%s put back", name)
	}
	g.Eventually(func(g Gomega) {
		css := &holdfastv1.ClusterServiceStatus{}
		g.Expect(hub.Get(ctx, statusKey, css)).To(Succeed())
		g.Expect(css.Status.InSyncCount).To(BeEquivalentTo(2))
	}).WithTimeout(60 * time.Second).Should(Succeed())
	// First drifts, each recorded: the first after a start compares everything.
	for _, name := range []string{"one", "two"} {
		edit(name)
		putBack(name)
		g.Eventually(func(g Gomega) int { return correctedOnHub(g, name) }).WithTimeout(30 * time.Second).Should(Equal(1))
	}
	time.Sleep(2 * time.Second) // the limit's token back

	t.Log("Two drifts: the second's recording waits for the limit")
	edit("one")
	putBack("one")
	edit("two")
	putBack("two")
	g.Eventually(func(g Gomega) int { return correctedOnHub(g, "one") }).WithTimeout(30 * time.Second).Should(Equal(2))
	t.Log("A third drift while the second is being recorded: put back before that recording is on the hub")
	time.Sleep(100 * time.Millisecond)
	edit("one")
	putBack("one")
	g.Expect(correctedOnHub(g, "two")).To(Equal(1), "the third drift was put back only once the second was recorded")
	g.Eventually(func(g Gomega) int { return correctedOnHub(g, "two") }).WithTimeout(30 * time.Second).Should(Equal(2))
	g.Eventually(func(g Gomega) int { return correctedOnHub(g, "one") }).WithTimeout(30 * time.Second).Should(Equal(3))
}

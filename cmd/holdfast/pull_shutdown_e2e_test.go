package main

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/agent"
	"holdfast.dev/holdfast/internal/controller"
)

// TestAgentStoppedDuringACorrectionRecordsIt: an agent told to stop while its correction's apply
// is on its way (the cluster has put the object back, the answer not yet come) still records
// that correction on the hub. Before, the apply's answer was lost to the cancelled context, the
// correction counted as failed and its record dropped with the reconcile, and the next agent
// found the object in sync: alice's edit put back and never recorded (seen in CI as
// TestPullClusterIsDeployedAndCorrectedByItsAgent losing the record of an edit made just before
// the agent restarted).
func TestAgentStoppedDuringACorrectionRecordsIt(t *testing.T) {
	f := startPullFleet(t)
	ctx, g, hub := t.Context(), NewWithT(t), f.hub
	f.stopAgent()

	// The agent's own cluster, reached through a transport that, once armed, stops the agent
	// as soon as the cluster has answered its correction of ConfigMap apps/held and before
	// the answer is handed back.
	agentCtx, stopAgent := context.WithCancel(ctx)
	defer stopAgent()
	var armed atomic.Bool
	own := rest.CopyConfig(f.edge.RESTConfig())
	own.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			correction := req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/namespaces/apps/configmaps/held") &&
				req.URL.Query().Get("fieldManager") == "holdfast"
			resp, err := rt.RoundTrip(req)
			if err != nil || !correction || !armed.CompareAndSwap(true, false) {
				return resp, err
			}
			// The stop reaches a reconcile's context a moment later (the manager cancels its
			// runnables' own contexts): the answer is handed back once it did, or after a while
			// if it does not.
			stopAgent()
			select {
			case <-req.Context().Done():
				// The answer lost to the stop, as when it races the cancellation.
				_ = resp.Body.Close()
				return nil, req.Context().Err()
			case <-time.After(2 * time.Second):
				return resp, nil
			}
		})
	})
	opts := f.agentOptions(t, own, controller.Options{SkipNameValidation: true})
	done := make(chan error, 1)
	go func() { done <- agent.Run(agentCtx, opts) }()

	statusKey := f.deployInline(t, "held", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, namespace: apps}\ndata: {v: declared}\n")
	status := func(g Gomega) *holdfastv1.ClusterServiceStatus {
		css := &holdfastv1.ClusterServiceStatus{}
		g.Expect(hub.Get(ctx, statusKey, css)).To(Succeed())
		return css
	}
	g.Eventually(func(g Gomega) {
		g.Expect(status(g).Status.InSyncCount).To(BeEquivalentTo(1))
	}).WithTimeout(60 * time.Second).Should(Succeed())

	t.Log("An edit, and the agent stopped while it puts it back")
	armed.Store(true)
	g.Eventually(func(g Gomega) {
		cm := &corev1.ConfigMap{}
		g.Expect(f.edgeClient.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "held"}, cm)).To(Succeed())
		cm.Data["v"] = "edited"
		g.Expect(f.edgeClient.Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())
	}).WithTimeout(30 * time.Second).Should(Succeed())
	select {
	case err := <-done:
		g.Expect(err).NotTo(HaveOccurred())
	case <-time.After(60 * time.Second):
		t.Fatal("the agent did not stop")
	}
	g.Expect(armed.Load()).To(BeFalse(), "the agent stopped during its correction")
	cm := &corev1.ConfigMap{}
	g.Expect(f.edgeClient.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "held"}, cm)).To(Succeed())
	g.Expect(cm.Data).To(HaveKeyWithValue("v", "declared"), "put back")
	// Recorded by the agent on its way out: no agent runs any more.
	g.Expect(status(g).Status.Drifts).To(ContainElement(And(HaveField("Name", "held"), HaveField("Manager", "kubectl-edit"),
		HaveField("CorrectedTime", Not(BeNil())), HaveField("Fields", ContainElement(HaveField("New", ContainSubstring("edited")))))),
		"the correction made while the agent stopped is recorded on the hub")
}

// roundTripFunc is an http.RoundTripper of a func.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

package clusterservicestatus_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// TestCorrectionsDoNotWaitForTheHub: with a slow hub (each status patch of the status object held
// 3 s), drifts in a row are each put back at once, while their recordings wait for the hub one
// after the other: the hub cache's update after a recording asks for no reconcile that holds the
// status object waiting for the next one (issue 32, behaviour 3). The Pull agent's own cache
// does ask for one; TestPullAgentCorrectsWhileItsHubIsSlow covers it.
func TestCorrectionsDoNotWaitForTheHub(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "first", "second")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	statusName := naming.StatusName(name, "cluster-1")

	var slow atomic.Bool
	var held, released atomic.Int32 // status patches of the status object held, and let go
	onHub(t, func(req *http.Request) {
		if slow.Load() && req.Method == http.MethodPatch && strings.HasSuffix(req.URL.Path, "/clusterservicestatuses/"+statusName+"/status") {
			held.Add(1)
			time.Sleep(3 * time.Second)
			released.Add(1)
		}
	})

	corrected := func(cm string) {
		t.Helper()
		eventually(t, func(g Gomega) {
			g.Expect(getConfigMap(g, "cluster-1", ns, cm).Data).To(HaveKeyWithValue("cluster", "cluster-1"), "%s put back", cm)
		})
	}
	// First drifts, with the hub at its pace: the first after the Cluster connected makes the
	// controller compare everything, as after an outage (TestCorrectionTouchesOnlyDriftedObjects).
	for _, cm := range []string{"first", "second"} {
		editConfigMap(t, "cluster-1", ns, cm, "kubectl-edit", "cluster", "hand-edited")
		corrected(cm)
	}
	waitQuiet(t, "cluster-1", time.Second)
	time.Sleep(time.Second) // the recordings done

	// Two drifts with a slow hub: the second's recording waits for the first's.
	slow.Store(true)
	editConfigMap(t, "cluster-1", ns, "first", "kubectl-edit", "cluster", "hand-edited")
	corrected("first")
	editConfigMap(t, "cluster-1", ns, "second", "kubectl-edit", "cluster", "hand-edited")
	corrected("second")
	// The first recording written, its status patch asks for a reconcile of the status object
	// (the hub cache's update), which would read the object whole after the recording still in
	// flight. A third drift meanwhile is put back before that recording is done.
	eventually(t, func(g Gomega) { g.Expect(released.Load()).To(BeNumerically(">=", 1)) })
	time.Sleep(300 * time.Millisecond)
	editConfigMap(t, "cluster-1", ns, "first", "kubectl-edit", "env", "hand-edited")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "first").Data).To(HaveKeyWithValue("env", "dev"), "first put back again")
	})
	NewWithT(t).Expect(released.Load()).To(BeNumerically("==", 1), "the third drift was put back only after the second recording's status patch went on")
	// Everything is recorded in the end.
	slow.Store(false)
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(correctedRecords(css, "first")).To(BeNumerically(">=", 1))
		g.Expect(correctedRecords(css, "second")).To(BeNumerically(">=", 1))
	})
}

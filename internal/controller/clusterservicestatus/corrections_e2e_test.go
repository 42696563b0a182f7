package clusterservicestatus_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestCorrectionTouchesOnlyDriftedObjects: correcting drift in a large service set reads and
// writes on the target only the drifted objects — no List of their kind, no read of any other
// object — and leaves the rest of the status as it was (no full reconcile is recorded), so its
// cost does not grow with the set (issue 11, behaviour 6; the latency is measured by
// bench/inventory). Members of the class: an edited object, a deleted one, and two edited at
// once.
func TestCorrectionTouchesOnlyDriftedObjects(t *testing.T) {
	const objects = 300
	name, ns := objName(t, ""), objName(t, "ns")
	ctx := context.Background()
	names := make([]string, objects)
	for i := range names {
		names[i] = fmt.Sprintf("cm-%04d", i)
	}
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, names...)})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	before := expectReady(t, name, "cluster-1")
	NewWithT(t).Expect(before.Status.InSyncCount).To(BeEquivalentTo(objects + 1))
	// A first drift, not looked at: right after the Cluster connected (here, when this test runs
	// alone), the first drift makes the controller compare everything, as after an outage.
	editConfigMap(t, "cluster-1", ns, "cm-0100", "kubectl-edit", "cluster", "hand-edited")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "cm-0100").Data).To(HaveKeyWithValue("cluster", "cluster-1"))
	})

	for _, tc := range []struct {
		what    string
		drifted []string
		drift   func(t *testing.T)
		// edited: the watch's copy of each drifted object is applied over, unread.
		edited bool
	}{
		{what: "one edited", drifted: []string{"cm-0150"}, edited: true, drift: func(t *testing.T) {
			editConfigMap(t, "cluster-1", ns, "cm-0150", "kubectl-edit", "cluster", "hand-edited")
		}},
		{what: "one deleted", drifted: []string{"cm-0007"}, drift: func(t *testing.T) {
			NewWithT(t).Expect(targets["cluster-1"].Delete(ctx, getConfigMap(NewWithT(t), "cluster-1", ns, "cm-0007"))).To(Succeed())
		}},
		{what: "two edited at once", drifted: []string{"cm-0020", "cm-0299"}, edited: true, drift: func(t *testing.T) {
			editConfigMap(t, "cluster-1", ns, "cm-0020", "kubectl-edit", "env", "hand-edited")
			editConfigMap(t, "cluster-1", ns, "cm-0299", "kubectl-edit", "env", "hand-edited")
		}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			// Once the deployment's own requests (e.g. the watches' first lists) are done.
			waitQuiet(t, "cluster-1", time.Second)
			prev := statusOf(NewWithT(t), name, "cluster-1")
			t0 := time.Now()
			tc.drift(t)
			eventually(t, func(g Gomega) {
				for _, n := range tc.drifted {
					cm := getConfigMap(g, "cluster-1", ns, n)
					g.Expect(cm.Data).To(HaveKeyWithValue("cluster", "cluster-1"), "%s put back", n)
					g.Expect(cm.Data).To(HaveKeyWithValue("env", "dev"), "%s put back", n)
				}
				css := statusOf(g, name, "cluster-1")
				for _, n := range tc.drifted {
					g.Expect(correctedRecords(css, n)).To(BeNumerically(">", correctedRecords(prev, n)), "drift of %s recorded corrected", n)
				}
			})
			// The rest of the reconcile (the status patch) is done.
			time.Sleep(time.Second)

			// On the target: the drifted objects only, one by one; an edited one is not even
			// read (the watch handed over the version it saw).
			var others, reads []string
			for _, req := range withoutProbes(requestsSince("cluster-1", t0)) {
				if !slices.ContainsFunc(tc.drifted, func(n string) bool { return strings.HasSuffix(req, "/namespaces/"+ns+"/configmaps/"+n) }) {
					others = append(others, req)
				} else if strings.HasPrefix(req, "GET ") {
					reads = append(reads, req)
				}
			}
			NewWithT(t).Expect(others).To(BeEmpty(), "requests to the target other than for the drifted objects")
			if tc.edited {
				NewWithT(t).Expect(reads).To(BeEmpty(), "reads of the edited objects before their correction")
			}

			// In status: the drifted objects InSync again, every other entry as it was, and no
			// full reconcile recorded.
			css := statusOf(NewWithT(t), name, "cluster-1")
			g := NewWithT(t)
			g.Expect(css.Status.LastFullReconcileTime).To(Equal(prev.Status.LastFullReconcileTime))
			g.Expect(css.Status.InSyncCount).To(BeEquivalentTo(objects + 1))
			g.Expect(css.Status.Services).To(HaveLen(1))
			g.Expect(css.Status.Services[0].Revision).To(Equal(prev.Status.Services[0].Revision))
			g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(BeEquivalentTo("True"))
			g.Expect(css.Status.Resources).To(HaveLen(len(prev.Status.Resources)))
			for i, rs := range css.Status.Resources {
				if slices.Contains(tc.drifted, rs.Name) && rs.Kind == "ConfigMap" {
					g.Expect(rs.State).To(Equal(holdfastv1.ResourceInSync), rs.Name)
					g.Expect(rs.Desired).To(Equal(prev.Status.Resources[i].Desired), "declaration digest of %s", rs.Name)
					continue
				}
				g.Expect(rs).To(Equal(prev.Status.Resources[i]), "entry %d", i)
			}
		})
	}

	// A change of the declaration is still a full reconcile: every object gets it.
	tpl := &holdfastv1.ServiceTemplate{}
	NewWithT(t).Expect(hub.Get(ctx, client.ObjectKey{Namespace: templateNamespace, Name: name}, tpl)).To(Succeed())
	tpl.Spec.Inline = strings.ReplaceAll(tpl.Spec.Inline, "env: '", "env: 'v2-")
	NewWithT(t).Expect(hub.Update(ctx, tpl)).To(Succeed())
	eventually(t, func(g Gomega) {
		for _, n := range []string{"cm-0000", "cm-0150", "cm-0299"} {
			g.Expect(getConfigMap(g, "cluster-1", ns, n).Data).To(HaveKeyWithValue("env", "v2-dev"))
		}
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.LastFullReconcileTime.After(before.Status.LastFullReconcileTime.Time)).To(BeTrue())
	})
	editConfigMap(t, "cluster-1", ns, "cm-0001", "kubectl-edit", "env", "hand-edited")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "cm-0001").Data).To(HaveKeyWithValue("env", "v2-dev"), "put back as now declared")
	})
}

// waitQuiet waits until the controller sent no request to cluster but health probes for quiet.
func waitQuiet(t *testing.T, cluster string, quiet time.Duration) {
	t.Helper()
	eventually(t, func(g Gomega) {
		since := time.Now().Add(-quiet)
		g.Expect(withoutProbes(requestsSince(cluster, since))).To(BeEmpty(), "requests in the last %s", quiet)
	})
}

// withoutProbes leaves the Cluster's health probes out of requests.
func withoutProbes(requests []string) []string {
	var out []string
	for _, req := range requests {
		if !strings.HasSuffix(req, " /version") && !strings.HasSuffix(req, "/selfsubjectreviews") {
			out = append(out, req)
		}
	}
	return out
}

// correctedRecords counts the drift records of ConfigMap name marked corrected.
func correctedRecords(css *holdfastv1.ClusterServiceStatus, name string) int {
	n := 0
	for _, d := range css.Status.Drifts {
		if d.Kind == "ConfigMap" && d.Name == name && d.CorrectedTime != nil {
			n++
		}
	}
	return n
}

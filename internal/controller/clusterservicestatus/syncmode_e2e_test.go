package clusterservicestatus_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestContinuousWaitsForAFullReconcile: Continuous re-applies on a declaration change or a full
// reconcile, as documented, and does not correct on sight — even when another service set in
// ContinuousWithDriftDetection mode watches the same kind on the same cluster, whose watch sees
// the change too. That set's own objects are still corrected at once.
func TestContinuousWaitsForAFullReconcile(t *testing.T) {
	watched, watchedNS := deployWatched(t, "dev", "cluster-1")
	name, ns := objName(t, "continuous"), objName(t, "continuous-ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a", "b")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuous,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")

	editConfigMap(t, "cluster-1", ns, "a", "kubectl-edit", "cluster", "edited-continuous")
	editConfigMap(t, "cluster-1", watchedNS, "a", "kubectl-edit", "cluster", "edited-watched")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", watchedNS, "a").Data["cluster"]).To(Equal("cluster-1"))
		g.Expect(statusOf(g, watched, "cluster-1").Status.DriftCount).To(BeNumerically(">=", 1))
	})
	consistently(t, 3*time.Second, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data["cluster"]).To(Equal("edited-continuous"))
		g.Expect(statusOf(g, name, "cluster-1").Status.DriftCount).To(BeZero())
	})

	t.Log("A full reconcile (requested) puts it back")
	requestCorrection(t, name, "full-1")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data["cluster"]).To(Equal("cluster-1"))
	})
}

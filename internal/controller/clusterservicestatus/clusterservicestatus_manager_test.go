package clusterservicestatus

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/event"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestAgentChanged: an agent acts on a new work (the annotation naming it) and on a change of
// its status object's spec, but not on a new revision alone, whose work is still to come.
func TestAgentChanged(t *testing.T) {
	base := func() *holdfastv1.ClusterServiceStatus {
		css := &holdfastv1.ClusterServiceStatus{}
		css.Name, css.Namespace, css.Generation = "web.edge", "fleet", 3
		css.Spec = holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "web", Cluster: "edge", Revision: "web-1"}
		css.Annotations = map[string]string{WorkAnnotation: "sha256:aaa"}
		return css
	}
	for _, c := range []struct {
		name   string
		change func(*holdfastv1.ClusterServiceStatus)
		want   bool
	}{
		{"a new work", func(c *holdfastv1.ClusterServiceStatus) { c.Annotations[WorkAnnotation] = "sha256:bbb" }, true},
		{"a new revision with its work", func(c *holdfastv1.ClusterServiceStatus) {
			c.Generation, c.Spec.Revision, c.Annotations[WorkAnnotation] = 4, "web-2", "sha256:bbb"
		}, true},
		{"a new revision alone", func(c *holdfastv1.ClusterServiceStatus) { c.Generation, c.Spec.Revision = 4, "web-2" }, false},
		{"another cleanup policy", func(c *holdfastv1.ClusterServiceStatus) {
			c.Generation, c.Spec.CleanupPolicy = 4, holdfastv1.DeletionOrphan
		}, true},
		{"a new revision and cleanup policy", func(c *holdfastv1.ClusterServiceStatus) {
			c.Generation, c.Spec.Revision, c.Spec.CleanupPolicy = 4, "web-2", holdfastv1.DeletionOrphan
		}, true},
		{"deleted (a new generation)", func(c *holdfastv1.ClusterServiceStatus) { c.Generation = 4 }, true},
		{"its status alone", func(c *holdfastv1.ClusterServiceStatus) { c.Status.Revision = "web-1" }, false},
	} {
		after := base()
		c.change(after)
		if got := agentChanged().Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: after}); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

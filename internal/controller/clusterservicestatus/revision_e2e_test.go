package clusterservicestatus_test

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestNewRevisionIsNotDrift: a new template revision that drops a data key of one object and a
// whole other object is Holdfast's own change. Its watches see the key go and the object
// deleted, compared with the revision before; neither is recorded as drift (test/soak found
// both recorded, then "corrected").
func TestNewRevisionIsNotDrift(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	revision := func(keys, objects string) string {
		out := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: %s}\ndata: {%s}\n", ns, ns, keys)
		return out + objects
	}
	extra := fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: %s}\ndata: {k: v}\n", ns)
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: revision("rev-1: a, keep: b", extra)})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")

	for i := 2; i <= 4; i++ {
		objects := ""
		if i%2 == 1 {
			objects = extra
		}
		updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) {
			tpl.Spec.Inline = revision(fmt.Sprintf("rev-%d: a, keep: b", i), objects)
		})
		eventually(t, func(g Gomega) {
			data := getConfigMap(g, "cluster-1", ns, "app").Data
			g.Expect(data).To(HaveKey(fmt.Sprintf("rev-%d", i)))
			g.Expect(data).NotTo(HaveKey(fmt.Sprintf("rev-%d", i-1)))
			if objects == "" {
				expectNoConfigMap(g, "cluster-1", ns, "extra")
			} else {
				getConfigMap(g, "cluster-1", ns, "extra")
			}
		})
	}
	consistently(t, 3*time.Second, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Drifts).To(BeEmpty(), "Holdfast's own new revisions recorded as drift")
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Status).To(BeEquivalentTo("True"))
	})
}

package apply_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
)

// TestCorrectionAppliesOverTheWatchsCopy: a correction given the drifted object as the watch saw
// it (Options.Live) judges the drift from it and puts the object back without reading it from
// the cluster; without a copy it reads the object first.
func TestCorrectionAppliesOverTheWatchsCopy(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	a, counter := newApplier(t)
	first, err := a.Apply(ctx, configMaps(t, "web"), apply.Options{DefaultNamespace: ns, Labels: ownerLabels})
	g.Expect(err).NotTo(HaveOccurred())

	for _, withCopy := range []bool{true, false} {
		cm := live(t, "v1", "ConfigMap", ns, "web")
		g.Expect(unstructured.SetNestedField(cm.Object, "edited", "data", "k")).To(Succeed())
		g.Expect(admin.Update(ctx, cm, client.FieldOwner("kubectl-edit"))).To(Succeed())
		seen := live(t, "v1", "ConfigMap", ns, "web") // what the watch would hand over

		var verdicts []drift.Verdict
		var copies int
		opts := apply.Options{DefaultNamespace: ns, Labels: ownerLabels, Corrections: true, Previous: first.Inventory,
			Correct: func(_, _ *unstructured.Unstructured, v drift.Verdict) bool {
				verdicts = append(verdicts, v)
				return true
			}}
		if withCopy {
			opts.Live = func(ref apply.Ref) *unstructured.Unstructured {
				copies++
				if ref.Name != "web" || ref.Namespace != ns {
					return nil
				}
				return seen
			}
		}
		counter.reset()
		res, err := a.Apply(ctx, configMaps(t, "web"), opts)
		g.Expect(err).NotTo(HaveOccurred())
		counter.mu.Lock()
		gets := counter.gets
		counter.mu.Unlock()

		g.Expect(actions(res)).To(Equal(map[string]apply.Action{"ConfigMap/web": apply.Configured}), "copy %t", withCopy)
		g.Expect(verdicts).To(HaveLen(1))
		g.Expect(verdicts[0].Drifted).To(BeTrue())
		g.Expect(verdicts[0].Fields).To(ContainElement(HaveField("Path", ".data.k")), "the drift is judged from the object handed over")
		v, _, _ := unstructured.NestedString(live(t, "v1", "ConfigMap", ns, "web").Object, "data", "k")
		g.Expect(v).To(Equal("v"), "put back")
		if withCopy {
			g.Expect(copies).To(Equal(1))
			g.Expect(gets).To(BeEmpty(), "a correction given the watch's copy reads nothing")
		} else {
			g.Expect(gets).To(ConsistOf(HaveSuffix("/configmaps/web")), "without a copy the object is read")
		}
	}
}

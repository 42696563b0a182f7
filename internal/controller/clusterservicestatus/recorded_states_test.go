package clusterservicestatus

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/notify"
)

// TestStateEvents: the objects of a Pull cluster's inventory newly Contested or Uncorrectable
// are reported once each (Contested, CorrectionFailed) with their drift and message; the
// annotation then holds them, so the next change of the status object reports nothing new; an
// object that leaves the state and enters it again with a new drift is reported again; other
// states are not reported.
func TestStateEvents(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 11, 28, 19, 0, 0, 0, time.UTC)
	css := &holdfastv1.ClusterServiceStatus{ObjectMeta: metav1.ObjectMeta{Namespace: "holdfast-pull-edge", Name: "web.edge"},
		Spec: holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "web", Cluster: "edge"}}
	drift := func(min int) *holdfastv1.DriftDetail {
		return &holdfastv1.DriftDetail{DetectedTime: metav1.NewMicroTime(now.Add(time.Duration(min) * time.Minute)), User: "bob", Manager: "other-controller"}
	}
	object := func(name string, state holdfastv1.ResourceState, d *holdfastv1.DriftDetail) holdfastv1.ResourceStatus {
		return holdfastv1.ResourceStatus{ResourceRef: holdfastv1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: name},
			Service: "app", State: state, LastDrift: d, Message: string(state) + " " + name}
	}

	inventory := []holdfastv1.ResourceStatus{
		object("a", holdfastv1.ResourceContested, drift(1)),
		object("b", holdfastv1.ResourceUncorrectable, drift(2)),
		object("c", holdfastv1.ResourceInSync, nil),
		object("d", holdfastv1.ResourceDrifted, drift(3)),
	}
	events, reported := stateEvents(css, inventory, "", now)
	g.Expect(events).To(HaveLen(2))
	g.Expect(events[0].Type).To(Equal(notify.Contested))
	g.Expect(events[0].Object.Name).To(Equal("a"))
	g.Expect(events[0].Message).To(Equal("Contested a"))
	g.Expect(events[0].Drift.Manager).To(Equal("other-controller"))
	g.Expect(events[0].Cluster.String()).To(Equal("holdfast-pull-edge/edge"))
	g.Expect(events[0].MultiClusterService).To(Equal("web"))
	g.Expect(events[0].Time).To(Equal(now))
	g.Expect(events[1].Type).To(Equal(notify.CorrectionFailed))
	g.Expect(events[1].Object.Name).To(Equal("b"))
	g.Expect(strings.Split(reported, ",")).To(HaveLen(2))

	t.Log("The same states again: nothing new, the annotation unchanged")
	again, same := stateEvents(css, inventory, reported, now)
	g.Expect(again).To(BeEmpty())
	g.Expect(same).To(Equal(reported))

	t.Log("a leaves Contested: dropped from the annotation; entering it again with a new drift is reported")
	inventory[0] = object("a", holdfastv1.ResourceInSync, drift(1))
	events, reported = stateEvents(css, inventory, reported, now)
	g.Expect(events).To(BeEmpty())
	g.Expect(strings.Split(reported, ",")).To(HaveLen(1))
	inventory[0] = object("a", holdfastv1.ResourceContested, drift(5))
	events, _ = stateEvents(css, inventory, reported, now)
	g.Expect(events).To(ConsistOf(HaveField("Event.Object.Name", "a")))

	t.Log("Nothing in those states: the annotation is emptied")
	_, reported = stateEvents(css, inventory[2:], reported, now)
	g.Expect(reported).To(BeEmpty())
}

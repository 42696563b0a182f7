package clusterservicestatus

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/inventory"
)

// One change, one record (test/soak's "drift recorded twice" and late watch reports): a watch's
// report of a version of an object is dropped when Holdfast has written the object since (the
// watch runs behind, or a comparison recorded and corrected the change first), when a record
// holds that version or a later one (a second watch, a comparison in Report mode), and when the
// same report waits already; a later version is a new drift.
func TestOneChangeOneRecord(t *testing.T) {
	ctx := context.Background()
	c1 := types.NamespacedName{Namespace: "fleet", Name: "c1"}
	key := types.NamespacedName{Namespace: "fleet", Name: "web.c1"}
	css := statusObject("fleet", "web.c1", "web", "c1")
	css.Status.Drifts = []holdfastv1.DriftRecord{{
		ResourceRef: holdfastv1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "demo", Name: "settings"},
		DriftDetail: holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Detection: holdfastv1.DriftDetectedByComparison, ResourceVersion: "30"},
	}}
	r := driftReconciler(t, css)
	r.ownWrites = &drift.OwnWrites{}

	// Holdfast's own write of another object, through the client every target write goes through.
	target := r.ownWrites.Client(c1, fake.NewClientBuilder().Build())
	written := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "other"}}
	if err := target.Create(ctx, written); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := target.Update(ctx, written); err != nil {
			t.Fatal(err)
		}
	}
	wroteAt, err := strconv.Atoi(written.ResourceVersion)
	if err != nil || wroteAt < 2 {
		t.Fatalf("the fake client's resourceVersion %q: %v", written.ResourceVersion, err)
	}

	// A report goes through onDrift (the watch) and, once a reconcile takes it, newDrifts (the
	// records as they are when it is recorded: the hub cache holds none).
	report := func(name string, rv int) int {
		c := changed("web")
		c.Object.SetName(name)
		c.Object.SetResourceVersion(strconv.Itoa(rv))
		r.onDrift(c1, c)
		d := r.memory.takeDrifts(key)
		for _, rec := range d {
			if rec.ResourceVersion != strconv.Itoa(rv) {
				t.Errorf("%s: record of version %q, want %d", name, rec.ResourceVersion, rv)
			}
		}
		return len(newDrifts(&scope{css: css, drifts: d}))
	}
	for _, c := range []struct {
		what string
		name string
		rv   int
		want int
	}{
		{"the version a record holds (a second watch, or a comparison that recorded it)", "settings", 30, 0},
		{"an older version than a record holds (a watch behind)", "settings", 29, 0},
		{"a later version (a new change)", "settings", 31, 1},
		{"a version before Holdfast's last write (put back already)", "other", wroteAt - 1, 0},
		{"the version after Holdfast's last write (a new change)", "other", wroteAt + 1, 1},
	} {
		if got := report(c.name, c.rv); got != c.want {
			t.Errorf("%s: %d records, want %d", c.what, got, c.want)
		}
	}

	// Two watches delivering one change before a reconcile takes it: remembered once.
	for range 2 {
		c := changed("web")
		c.Object.SetResourceVersion("40")
		r.onDrift(c1, c)
	}
	if d := r.memory.takeDrifts(key); len(d) != 1 {
		t.Errorf("one change reported by two watches: %d pending drifts, want 1", len(d))
	}

	// A report that waited while a reconcile corrected the object is dropped when the next
	// reconcile takes it.
	c := changed("web")
	c.Object.SetName("other")
	c.Object.SetResourceVersion(strconv.Itoa(wroteAt + 1))
	r.onDrift(c1, c)
	pending := r.memory.takeDrifts(key)
	if len(pending) != 1 {
		t.Fatalf("%d pending drifts, want 1", len(pending))
	}
	for range 2 { // the edit (the fake client's counter stands for the cluster's), then the correction
		if err := target.Update(ctx, written); err != nil {
			t.Fatal(err)
		}
	}
	declared := &unstructured.Unstructured{}
	declared.SetAPIVersion("v1")
	declared.SetKind("ConfigMap")
	declared.SetNamespace("demo")
	declared.SetName("other")
	rendered := []renderedService{{svc: holdfastv1.Service{Name: "app"}, objects: []*unstructured.Unstructured{declared}}}
	s := &scope{css: css, ownWrites: &drift.OwnWrites{}, drifts: pending,
		mcs: &holdfastv1.MultiClusterService{Spec: holdfastv1.MultiClusterServiceSpec{SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection}}}
	if kept := keepDrifts(s, rendered); len(kept) != 1 {
		t.Fatalf("a report of a version no write followed: kept %d, want 1", len(kept))
	}
	s.ownWrites = r.ownWrites
	if kept := keepDrifts(s, rendered); len(kept) != 0 {
		t.Errorf("a report of a version Holdfast has written over since: kept %+v", kept)
	}
}

// A comparison that finds an object still drifted after an apply failed (the cluster was
// unreachable, and the status entry lost its drift) records nothing new for the change a record
// holds: test/soak saw one change recorded by a watch, then by the comparison once the cluster
// was back. A later version is a new drift.
func TestComparisonOfARecordedChange(t *testing.T) {
	ref := unversioned(apply.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "demo", Name: "settings"})
	css := statusObject("fleet", "web.c1", "web", "c1")
	css.Status.Drifts = []holdfastv1.DriftRecord{
		{ResourceRef: fromRef(ref), DriftDetail: holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged,
			Detection: holdfastv1.DriftDetectedByWatch, Manager: "kubectl-edit", ResourceVersion: "30"}},
		{ResourceRef: fromRef(ref), DriftDetail: holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged,
			Detection: holdfastv1.DriftDetectedByWatch, Manager: "older-edit", ResourceVersion: "20"}},
	}
	s := &scope{css: css, previous: inventory.Index{
		driftRef(ref): {ResourceRef: fromRef(ref), State: holdfastv1.ResourceFailed, Message: "connection refused"}}}
	now := time.Now()

	d, isNew := s.driftDetail(ref, drift.Verdict{Drifted: true, ResourceVersion: "30"}, now)
	if isNew || d.Manager != "kubectl-edit" || d.Detection != holdfastv1.DriftDetectedByWatch {
		t.Errorf("the version a record holds: new %v, detail %+v; want the watch's record", isNew, d)
	}
	if d, isNew := s.driftDetail(ref, drift.Verdict{Drifted: true, ResourceVersion: "31"}, now); !isNew || d.Detection != holdfastv1.DriftDetectedByComparison {
		t.Errorf("a later version: new %v, detail %+v; want a new comparison record", isNew, d)
	}
	if _, isNew := s.driftDetail(ref, drift.Verdict{Drifted: true}, now); !isNew {
		t.Error("a verdict without a version matched a record")
	}
}

package multiclusterservice

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/rollout"
)

// TestPruneRevisions: beyond revisionHistoryLimit, the oldest revisions go; never one a status
// object deploys or was last reconciled with, nor the rollout's own or its stable one; another
// service set's revisions are not touched.
func TestPruneRevisions(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := holdfastv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: holdfastv1.MultiClusterServiceSpec{Rollout: &holdfastv1.RolloutStrategy{RevisionHistoryLimit: ptr.To[int32](1)}}}
	other := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "api"}}
	b := fake.NewClientBuilder().WithScheme(scheme)
	for i, name := range []string{"web-1", "web-2", "web-3", "web-4", "web-5", "web-6"} {
		b = b.WithObjects(rollout.NewControllerRevision(mcs, "fleet", name, []byte("{}"), int64(i+1)))
	}
	b = b.WithObjects(rollout.NewControllerRevision(other, "fleet", "api-1", []byte("{}"), 1))
	c := b.Build()
	css := &holdfastv1.ClusterServiceStatus{Spec: holdfastv1.ClusterServiceStatusSpec{Revision: "web-2"}}
	css.Status.Revision = "web-1"
	s := &scope{mcs: mcs, plan: &rollout.Plan{
		Status: holdfastv1.RolloutStatus{Revision: "web-6", StableRevision: "web-3"},
		Assign: map[string]string{"fleet/c1": "web-2"},
	}}
	r := &Reconciler{Client: c}
	if err := r.pruneRevisions(context.Background(), s, map[string]bool{"fleet": true}, map[string]*holdfastv1.ClusterServiceStatus{"fleet/c1": css}); err != nil {
		t.Fatal(err)
	}
	list := &appsv1.ControllerRevisionList{}
	if err := c.List(context.Background(), list, client.InNamespace("fleet")); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, cr := range list.Items {
		left = append(left, cr.Name)
	}
	slices.Sort(left)
	// In use: web-1 (reconciled), web-2 (assigned), web-3 (stable), web-6 (rolled out); of the
	// others, the newest one (web-5) is kept, web-4 goes.
	if want := []string{"api-1", "web-1", "web-2", "web-3", "web-5", "web-6"}; !slices.Equal(left, want) {
		t.Fatalf("revisions left %v, want %v", left, want)
	}
}

package agent

import (
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestKeptKeepsUnrecordedRecords: the drift records waiting for the hub are saved on the agent's
// cluster and given back to the next agent, its own namespace's only; records written (none
// left) are deleted there.
func TestKeptKeepsUnrecordedRecords(t *testing.T) {
	own := keptTestStore(t)
	k, err := NewKept(t.Context(), own, "holdfast-system", hubNS, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	web := types.NamespacedName{Namespace: hubNS, Name: "web-edge"}
	records := []holdfastv1.DriftRecord{{ResourceRef: holdfastv1.ResourceRef{Kind: "ConfigMap", Namespace: "apps", Name: "hello"},
		DriftDetail: holdfastv1.DriftDetail{User: "alice", DetectedTime: metav1.NowMicro()}}}
	k.Keep(web, "edge", records)
	k.Keep(types.NamespacedName{Namespace: "holdfast-pull-other", Name: "db-other"}, "other", records)
	k.flush(t.Context())

	next, err := NewKept(t.Context(), own, "holdfast-system", hubNS, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	kept := next.Kept()
	if len(kept) != 1 || kept[web].Cluster != "edge" || len(kept[web].Records) != 1 || kept[web].Records[0].User != "alice" {
		t.Fatalf("the next agent took back %+v, want web-edge's one record by alice", kept)
	}

	next.Keep(web, "edge", nil)
	next.Keep(types.NamespacedName{Namespace: "holdfast-pull-other", Name: "db-other"}, "other", nil)
	next.flush(t.Context())
	secrets := savedSecrets(t, own)
	if len(secrets.Items) != 0 {
		t.Errorf("%d Secrets left once the records were written, want none", len(secrets.Items))
	}
}

package clusterservicestatus

import (
	"encoding/json"
	"testing"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestStatusPatchLeavesAnUnchangedInventoryOut(t *testing.T) {
	before := &holdfastv1.ClusterServiceStatus{}
	before.ResourceVersion = "7"
	before.Status.Resources = []holdfastv1.ResourceStatus{
		{ResourceRef: holdfastv1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}, State: holdfastv1.ResourceInSync},
		{ResourceRef: holdfastv1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "a", Name: "y"}, State: holdfastv1.ResourceInSync},
	}
	patchOf := func(after *holdfastv1.ClusterServiceStatus) map[string]any {
		t.Helper()
		p, err := statusPatch(before, after)
		if err != nil {
			t.Fatal(err)
		}
		data, err := p.Data(after)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]any{}
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}

	after := before.DeepCopy()
	after.Status.DriftCount = 3
	p := patchOf(after)
	if rv := p["metadata"].(map[string]any)["resourceVersion"]; rv != "7" {
		t.Errorf("resourceVersion in the patch = %v, want 7 (optimistic lock)", rv)
	}
	st := p["status"].(map[string]any)
	if _, ok := st["resources"]; ok {
		t.Errorf("unchanged inventory in the patch: %v", p)
	}
	if st["driftCount"] != float64(3) {
		t.Errorf("driftCount in the patch = %v, want 3", st["driftCount"])
	}
	if len(after.Status.Resources) != 2 || len(before.Status.Resources) != 2 {
		t.Error("statusPatch changed its arguments")
	}

	after.Status.Resources[1].State = holdfastv1.ResourceDrifted
	if got := patchOf(after)["status"].(map[string]any)["resources"]; got == nil || len(got.([]any)) != 2 {
		t.Errorf("changed inventory: patch holds %v, want the whole list", got)
	}
}

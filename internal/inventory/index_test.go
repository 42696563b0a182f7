package inventory

import (
	"testing"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestIndex(t *testing.T) {
	entry := func(version, name string, state holdfastv1.ResourceState) holdfastv1.ResourceStatus {
		return holdfastv1.ResourceStatus{ResourceRef: holdfastv1.ResourceRef{Group: "apps", Version: version, Kind: "Deployment", Namespace: "web", Name: name}, State: state}
	}
	entries := []holdfastv1.ResourceStatus{entry("v1", "a", holdfastv1.ResourceInSync), entry("v1", "b", holdfastv1.ResourceDrifted)}
	ix := IndexOf(entries)
	if rs, ok := ix.Of(entry("v1beta1", "b", "").ResourceRef); !ok || rs.State != holdfastv1.ResourceDrifted {
		t.Errorf("b at another version: %v %v, want its entry", rs, ok)
	}
	if _, ok := ix.Of(entry("v1", "c", "").ResourceRef); ok {
		t.Error("an object the inventory does not hold was found")
	}

	got := Replace(entries, []holdfastv1.ResourceStatus{entry("v1beta1", "b", holdfastv1.ResourceInSync), entry("v1", "c", holdfastv1.ResourceInSync)})
	want := []string{"a InSync", "b InSync", "c InSync"}
	if len(got) != len(want) {
		t.Fatalf("Replace: %d entries, want %d", len(got), len(want))
	}
	for i, rs := range got {
		if s := rs.Name + " " + string(rs.State); s != want[i] {
			t.Errorf("Replace: entry %d is %s, want %s", i, s, want[i])
		}
	}
	if entries[1].State != holdfastv1.ResourceDrifted {
		t.Error("Replace changed the entries it was given")
	}
}

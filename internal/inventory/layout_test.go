package inventory

import (
	"fmt"
	"strings"
	"testing"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func entries(n int, state holdfastv1.ResourceState) []holdfastv1.ResourceStatus {
	out := make([]holdfastv1.ResourceStatus, n)
	for i := range out {
		out[i] = holdfastv1.ResourceStatus{
			ResourceRef: holdfastv1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: fmt.Sprintf("cm-%05d", i)},
			Service:     "web", State: state, Desired: strings.Repeat("d", 64), Owned: strings.Repeat("o", 64),
		}
	}
	return out
}

func TestLayout(t *testing.T) {
	bulky := entries(50, holdfastv1.ResourceDrifted)
	for i := range bulky {
		bulky[i].LastDrift = &holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged,
			Fields: []holdfastv1.FieldChange{{Path: ".data.big", Old: strings.Repeat("x", 20<<10), New: strings.Repeat("y", 20<<10)}}}
	}
	cases := []struct {
		name          string
		entries       []holdfastv1.ResourceStatus
		current, size int
		want          int
	}{
		{"small inventories stay inline", entries(10, holdfastv1.ResourceInSync), 0, 0, 0},
		{"up to the shard size inline", entries(1000, holdfastv1.ResourceInSync), 0, 0, 0},
		{"beyond it, sharded", entries(1001, holdfastv1.ResourceInSync), 0, 0, 2},
		{"20,000 entries in 32 shards", entries(20000, holdfastv1.ResourceInSync), 0, 0, 32},
		{"a smaller shard size", entries(1000, holdfastv1.ResourceInSync), 0, 64, 16},
		{"sharded stays sharded above half the size", entries(600, holdfastv1.ResourceInSync), 2, 0, 2},
		{"never fewer shards while sharded", entries(2100, holdfastv1.ResourceInSync), 8, 0, 8},
		{"more shards when outgrown", entries(2100, holdfastv1.ResourceInSync), 2, 0, 4},
		{"back inline at half the size", entries(500, holdfastv1.ResourceInSync), 2, 0, 0},
		{"large entries are sharded by bytes", bulky, 0, 0, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Layout(c.entries, c.current, c.size); got != c.want {
				t.Fatalf("Layout(%d entries, current %d, size %d) = %d, want %d", len(c.entries), c.current, c.size, got, c.want)
			}
		})
	}
}

// TestShardsStayUnderTheLimit: whatever their number, shards of small entries are well below
// what the API server accepts, and evenly filled.
func TestShardsStayUnderTheLimit(t *testing.T) {
	all := entries(20000, holdfastv1.ResourceInSync)
	parts := Split(all, Layout(all, 0, 0))
	total := 0
	for i, p := range parts {
		total += len(p)
		if size := jsonSize(p); size > maxShardBytes {
			t.Fatalf("shard %d is %d bytes", i, size)
		}
		if len(p) > 2*DefaultShardSize {
			t.Fatalf("shard %d holds %d entries: the hash spreads them badly", i, len(p))
		}
	}
	if total != len(all) {
		t.Fatalf("the shards hold %d entries, want %d", total, len(all))
	}
}

// TestAssignmentIsStable: an object's shard depends on its reference only (not its version, state
// or the other entries), so that changing one entry rewrites one shard.
func TestAssignmentIsStable(t *testing.T) {
	all := entries(3000, holdfastv1.ResourceInSync)
	before := Split(all, 4)
	changed := append([]holdfastv1.ResourceStatus{}, all...)
	changed[1234].State, changed[1234].Owned, changed[1234].Version = holdfastv1.ResourceDrifted, "other", "v2"
	after := Split(changed, 4)
	differ := 0
	for i := range before {
		if fmt.Sprint(before[i]) != fmt.Sprint(after[i]) {
			differ++
		}
	}
	if differ != 1 {
		t.Fatalf("changing one entry changed %d shards, want 1", differ)
	}
}

func TestSummary(t *testing.T) {
	all := append(entries(5000, holdfastv1.ResourceInSync), entries(150, holdfastv1.ResourceFailed)...)
	listed, omitted := Summary(all)
	if len(listed) != holdfastv1.MaxSummarizedResources || omitted != 50 {
		t.Fatalf("Summary lists %d and omits %d, want %d and 50", len(listed), omitted, holdfastv1.MaxSummarizedResources)
	}
	for _, rs := range listed {
		if rs.State == holdfastv1.ResourceInSync {
			t.Fatalf("Summary lists an InSync entry")
		}
	}
}

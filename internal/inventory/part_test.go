package inventory

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// The bookkeeping of a part (the behaviour against a real API server, through a drift correction,
// is TestShardedInventory in the clusterservicestatus package): LoadPart reads the shard holding
// the entry and no other, SavePart writes it alone with the summary, and refuses changes beyond it.
func TestPartReadsAndWritesOnlyTheShardOfAnEntry(t *testing.T) {
	c, n := countingClient(t)
	ctx := context.Background()
	store := Store{Client: c, Reader: c, ShardSize: 100}
	css := &holdfastv1.ClusterServiceStatus{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web.c1", UID: "u1"}}
	all := entries(1000, holdfastv1.ResourceInSync)
	// A Failed entry in another shard than the one changed: in the summary.
	const failed, changed = 7, 321
	all[failed].State = holdfastv1.ResourceFailed
	st, err := store.Save(ctx, css, all, nil)
	if err != nil {
		t.Fatal(err)
	}
	css.Status, css.Status.ResourceCount = st, int32(len(all))
	shards := len(css.Status.Inventory.Names)
	if ShardOf(all[failed].ResourceRef, shards) == ShardOf(all[changed].ResourceRef, shards) {
		t.Fatalf("test entries %d and %d share a shard; pick others", failed, changed)
	}
	if !Partial(css) {
		t.Fatal("Partial: false for a sharded inventory with a whole summary")
	}

	*n = requests{}
	part, p, err := store.LoadPart(ctx, css, []holdfastv1.ResourceRef{all[changed].ResourceRef})
	if err != nil {
		t.Fatalf("LoadPart: %v", err)
	}
	inShard := len(Split(all, shards)[ShardOf(all[changed].ResourceRef, shards)])
	if n.gets != 1 || n.lists != 0 || len(part) != inShard+1 {
		t.Fatalf("LoadPart: %d gets, %d lists, %d entries; want 1 get, no list, %d entries", n.gets, n.lists, len(part), inShard+1)
	}

	// The changed entry's shard alone is written, and the summary lists both entries not InSync.
	edited := all[changed]
	edited.State, edited.Message = holdfastv1.ResourceFailed, "refused"
	st, err = store.SavePart(ctx, css, Replace(part, []holdfastv1.ResourceStatus{edited}), p)
	if err != nil {
		t.Fatalf("SavePart: %v", err)
	}
	if n.writes != 1 || len(st.Resources) != 2 || st.Inventory.Omitted != 0 || len(st.Inventory.Names) != shards {
		t.Fatalf("SavePart: %d writes, summary %v (%d omitted), %d shards; want 1 write, 2 entries, %d shards",
			n.writes, st.Resources, st.Inventory.Omitted, len(st.Inventory.Names), shards)
	}
	css.Status = st
	css.Status.ResourceCount = int32(len(all))
	whole, _, err := store.Load(ctx, css)
	if err != nil {
		t.Fatal(err)
	}
	want := Replace(all, []holdfastv1.ResourceStatus{edited})
	summary, _ := Summary(want)
	if !equality.Semantic.DeepEqual(IndexOf(whole), IndexOf(want)) || !equality.Semantic.DeepEqual(st.Resources, summary) {
		t.Fatalf("after SavePart the inventory or its summary is not the whole one with the entry changed")
	}

	// Changing an entry of a shard not read, or adding one there, is refused and writes nothing.
	part, p, err = store.LoadPart(ctx, css, []holdfastv1.ResourceRef{all[changed].ResourceRef})
	if err != nil {
		t.Fatal(err)
	}
	fixed := all[failed]
	fixed.State = holdfastv1.ResourceInSync
	added := all[0]
	added.Name = "new"
	for _, update := range []holdfastv1.ResourceStatus{fixed, added} {
		if ShardOf(update.ResourceRef, shards) == ShardOf(all[changed].ResourceRef, shards) {
			continue
		}
		n.writes = 0
		if _, err := store.SavePart(ctx, css, Replace(part, []holdfastv1.ResourceStatus{update}), p); !errors.Is(err, ErrBeyondPart) || n.writes != 0 {
			t.Errorf("SavePart changing %s outside the part: %v with %d writes; want ErrBeyondPart and none", update.Name, err, n.writes)
		}
	}

	// A shard the part needs that is missing makes it incomplete, as Load does.
	if err := c.Delete(ctx, &holdfastv1.ClusterServiceInventory{ObjectMeta: metav1.ObjectMeta{Namespace: "ns",
		Name: css.Status.Inventory.Names[ShardOf(all[changed].ResourceRef, shards)]}}); err != nil {
		t.Fatal(err)
	}
	var incomplete *IncompleteError
	if _, _, err := store.LoadPart(ctx, css, []holdfastv1.ResourceRef{all[changed].ResourceRef}); !errors.As(err, &incomplete) {
		t.Fatalf("LoadPart with its shard missing: %v, want an IncompleteError", err)
	}
}

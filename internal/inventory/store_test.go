package inventory

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// A unit of the write path's bookkeeping, with the fake client (the behaviour against a real API
// server is TestShardedInventory in the clusterservicestatus package): which shards Save writes,
// and what Load makes of a missing one.
func TestSaveWritesOnlyChangedShards(t *testing.T) {
	c, n := countingClient(t)
	store := Store{Client: c, Reader: c, ShardSize: 100}
	css := &holdfastv1.ClusterServiceStatus{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web.c1", UID: "u1"}}
	all := entries(1000, holdfastv1.ResourceInSync)

	save := func() {
		t.Helper()
		_, shards, err := store.Load(context.Background(), css)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		st, err := store.Save(context.Background(), css, all, shards)
		if err != nil {
			t.Fatalf("Save: %v", err)
		}
		css.Status = st
	}
	save()
	if got := len(css.Status.Inventory.Names); got != 16 || n.writes != 16 {
		t.Fatalf("first Save: %d shards, %d writes; want 16 and 16", got, n.writes)
	}
	n.writes = 0
	save()
	if n.writes != 0 {
		t.Fatalf("Save of an unchanged inventory wrote %d shards", n.writes)
	}
	all[321].State, all[321].Message = holdfastv1.ResourceFailed, "refused"
	save()
	if n.writes != 1 {
		t.Fatalf("Save after one entry changed wrote %d shards, want 1", n.writes)
	}
	if len(css.Status.Resources) != 1 || css.Status.Resources[0].Name != all[321].Name {
		t.Fatalf("status.resources = %v, want the one Failed entry", css.Status.Resources)
	}
	loaded, _, err := store.Load(context.Background(), css)
	if err != nil || len(loaded) != len(all) {
		t.Fatalf("Load: %d entries, %v; want %d", len(loaded), err, len(all))
	}

	lost := &holdfastv1.ClusterServiceInventory{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: css.Status.Inventory.Names[5]}}
	if err := c.Delete(context.Background(), lost); err != nil {
		t.Fatal(err)
	}
	var incomplete *IncompleteError
	if _, _, err := store.Load(context.Background(), css); !errors.As(err, &incomplete) {
		t.Fatalf("Load with a shard missing: %v, want an IncompleteError", err)
	}
}

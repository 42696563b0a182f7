package sharding

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestGateCancelsAndDrainsWhatItLetsGo(t *testing.T) {
	ab := NewView("a", "b")
	var mine, theirs types.NamespacedName
	for i := 0; mine.Name == "" || theirs.Name == ""; i++ {
		k := types.NamespacedName{Namespace: "fleet", Name: "c" + string(rune('a'+i%26)) + string(rune('a'+i/26))}
		if ab.Owner(k.String()) == "a" {
			mine = k
		} else {
			theirs = k
		}
	}
	g := &gate{}
	if _, _, ok := g.begin(context.Background(), mine); ok {
		t.Fatal("a gate that owns nothing admitted a reconcile")
	}
	g.set(Ownership{Self: "a", Views: []View{ab}})
	if _, _, ok := g.begin(context.Background(), theirs); ok {
		t.Errorf("admitted a reconcile of %s, which b owns", theirs)
	}
	ctx, done, ok := g.begin(context.Background(), mine)
	if !ok {
		t.Fatalf("refused a reconcile of %s, which a owns", mine)
	}
	if !g.drained() || !g.busy(mine) {
		t.Errorf("drained %v, busy %v with a reconcile of an owned cluster running; want true, true", g.drained(), g.busy(mine))
	}

	g.set(Ownership{Self: "a"}) // lost everything
	if ctx.Err() == nil {
		t.Error("the running reconcile's context was not cancelled when its cluster was let go")
	}
	if g.drained() {
		t.Error("drained while a reconcile of a cluster let go still runs")
	}
	done()
	if !g.drained() || g.busy(mine) {
		t.Errorf("drained %v, busy %v after the reconcile returned; want true, false", g.drained(), g.busy(mine))
	}
}

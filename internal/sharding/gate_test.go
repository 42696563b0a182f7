package sharding

import (
	"context"
	"slices"
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

// TestGateRemembersWhatItTurnedAway: reconciles refused or cancelled while the replica did not
// act on their cluster are reported once, so that settle can queue them again when the replica
// acts on the cluster again without having let it go.
func TestGateRemembersWhatItTurnedAway(t *testing.T) {
	a := NewView("a")
	running, refused := types.NamespacedName{Namespace: "fleet", Name: "running"}, types.NamespacedName{Namespace: "fleet", Name: "refused"}
	g := &gate{}
	g.set(Ownership{Self: "a", Views: []View{a}})
	_, done, ok := g.begin(context.Background(), running)
	if !ok {
		t.Fatal("refused a reconcile of a cluster the only replica owns")
	}
	if got := g.takeTurnedAway(); len(got) != 0 {
		t.Fatalf("turned away %v before anything was refused", got)
	}
	g.set(Ownership{Self: "a"}) // a moment acting on nothing
	if _, _, ok := g.begin(context.Background(), refused); ok {
		t.Fatal("admitted a reconcile while acting on nothing")
	}
	done()
	g.set(Ownership{Self: "a", Views: []View{a}})
	got := g.takeTurnedAway()
	if len(got) != 2 || !slices.Contains(got, running) || !slices.Contains(got, refused) {
		t.Fatalf("turned away %v, want %s (cancelled) and %s (refused)", got, running, refused)
	}
	if again := g.takeTurnedAway(); len(again) != 0 {
		t.Fatalf("turned away %v again after they were taken", again)
	}
}

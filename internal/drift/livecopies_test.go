package drift

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// TestLiveCopiesKeepOnlyTheNewestDrift: the watch keeps the whole object of a drift for its
// correction, and any later event of the object (an update that is no drift, Holdfast's own
// write, a deletion) drops it, so a correction never applies over a version older than the
// newest the watch saw. A copy is taken once.
func TestLiveCopiesKeepOnlyTheNewestDrift(t *testing.T) {
	a := NewApplied()
	a.Set(target, types.NamespacedName{Namespace: "fleet", Name: "shop-cluster-1"}, []ObjectRef{webRef})
	c := a.Compactor(target)
	w := &Watches{OnChange: func(types.NamespacedName, Change) {}, Live: NewLiveCopies(0)}
	h := w.handler(target)
	take := func() string {
		u := w.Live.Take(target, configMapGVK, "demo", "web")
		if u == nil {
			return ""
		}
		return u.GetResourceVersion()
	}

	applied := transform(t, c, configMap(t, "u1", "1", "declared", ""))
	edited := transform(t, c, configMap(t, "u1", "2", "edited", "", kubectlOwnsValue))
	h.OnUpdate(applied, edited)
	if got := take(); got != "2" {
		t.Fatalf("after a drift the copy kept is version %q, want 2", got)
	}
	if got := take(); got != "" {
		t.Fatalf("a copy taken twice: %q", got)
	}

	// Holdfast's correction (a change under its field manager) drops a copy too: a drift,
	// then another manager's update that is no drift, and the copy is gone.
	prev := edited
	next := func(rv, value string, entries ...string) *Snapshot {
		n := transform(t, c, configMap(t, "u1", rv, value, "", entries...))
		h.OnUpdate(prev, n)
		prev = n
		return n
	}
	next("3", "declared")
	next("4", "edited", kubectlOwnsValue)
	next("5", "edited", kubectlOwnsValue, otherOwnsTheirs)
	if got := take(); got != "" {
		t.Fatalf("a copy older than the newest version seen was kept: %q", got)
	}

	// A drift, then a change under Holdfast's field manager (claimed, not judged here).
	next("6", "declared")
	next("7", "edited", kubectlOwnsValue)
	next("8", "declared")
	if got := take(); got != "" {
		t.Fatalf("a copy outlived a write under Holdfast's field manager: %q", got)
	}

	// A drift, then the object's deletion.
	last := next("9", "edited", kubectlOwnsValue)
	h.OnDelete(last)
	if got := take(); got != "" {
		t.Fatalf("a copy outlived its object: %q", got)
	}

	// And each drift keeps its own version.
	next("10", "declared")
	next("11", "edited", kubectlOwnsValue)
	if got := take(); got != "11" {
		t.Fatalf("after a drift the copy kept is version %q, want 11", got)
	}
}

// TestLiveCopiesBounds: copies are taken only at the version they were kept for, and the least
// recently kept go first past the byte bound; an object larger than the bound is not kept.
func TestLiveCopiesBounds(t *testing.T) {
	l := NewLiveCopies(0)
	l.keep(target, configMap(t, "u1", "2", "edited", ""))
	if u := l.Take(target, schema.GroupVersionKind{Version: "v2", Kind: "ConfigMap"}, "demo", "web"); u != nil {
		t.Fatal("a copy of another version was taken")
	}
	other := types.NamespacedName{Namespace: "fleet", Name: "cluster-2"}
	l.keep(target, configMap(t, "u1", "2", "edited", ""))
	if u := l.Take(other, configMapGVK, "demo", "web"); u != nil {
		t.Fatal("a copy was taken for another cluster")
	}

	one := approxSize(configMap(t, "u1", "2", "edited", "").Object)
	small := NewLiveCopies(one * 2)
	for _, cluster := range []string{"a", "b", "c"} {
		small.keep(types.NamespacedName{Name: cluster}, configMap(t, "u1", "2", "edited", ""))
	}
	if _, kept := small.kept.Size(); kept > one*2 {
		t.Fatalf("%d bytes kept, over the bound of %d", kept, one*2)
	}
	if u := small.Take(types.NamespacedName{Name: "a"}, configMapGVK, "demo", "web"); u != nil {
		t.Fatal("the least recently kept copy outlived the bound")
	}
	if u := small.Take(types.NamespacedName{Name: "c"}, configMapGVK, "demo", "web"); u == nil {
		t.Fatal("the newest copy was dropped")
	}
	huge := configMap(t, "u1", "2", strings.Repeat("x", int(one*2)), "")
	small.keep(types.NamespacedName{Name: "d"}, huge)
	if u := small.Take(types.NamespacedName{Name: "d"}, configMapGVK, "demo", "web"); u != nil {
		t.Fatal("an object over the bound was kept")
	}

	var none *LiveCopies
	none.keep(target, configMap(t, "u1", "2", "edited", ""))
	if none.Take(target, configMapGVK, "demo", "web") != nil {
		t.Fatal("a nil LiveCopies kept something")
	}
}

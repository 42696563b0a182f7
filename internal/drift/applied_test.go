package drift

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

var target = types.NamespacedName{Namespace: "fleet", Name: "cluster-1"}

// webRef is configMap's object.
var webRef = ObjectRef{Kind: "ConfigMap", Namespace: "demo", Name: "web"}

// flooded is a labelled ConfigMap Holdfast did not apply, with a large holdfast.dev/ annotation.
func flooded(t *testing.T, i, annotationBytes int) *unstructured.Unstructured {
	u := configMap(t, fmt.Sprintf("f-%d", i), "7", "x", "")
	u.SetName(fmt.Sprintf("flood-%d", i))
	a := u.GetAnnotations()
	a["holdfast.dev/padding"] = strings.Repeat("p", annotationBytes)
	u.SetAnnotations(a)
	return u
}

func transform(t *testing.T, c *Compactor, u *unstructured.Unstructured) *Snapshot {
	t.Helper()
	s, err := c.Transform(u)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*Snapshot)
}

// TestOnlyAppliedObjectsAreKept: a labelled object no inventory holds is a stub, whatever its
// holdfast.dev/ annotations carry, and what the cluster's caches keep is what Holdfast applied.
func TestOnlyAppliedObjectsAreKept(t *testing.T) {
	a := NewApplied()
	a.Set(target, types.NamespacedName{Namespace: "fleet", Name: "shop-cluster-1"}, []ObjectRef{webRef})
	c := a.Compactor(target)
	ours := transform(t, c, configMap(t, "u1", "1", "declared", ""))
	if ours.IsStub() || ours.GetAnnotations()["holdfast.dev/multiclusterservice"] != "shop" {
		t.Fatalf("the applied object's snapshot: stub %v, annotations %v", ours.IsStub(), ours.GetAnnotations())
	}
	for i := range 100 {
		s := transform(t, c, flooded(t, i, 64<<10))
		if !s.IsStub() || len(s.GetAnnotations()) > 0 || len(s.GetLabels()) > 0 || s.keptBytes() > 64 {
			t.Fatalf("foreign object %d: stub %v, %d bytes kept, annotations %d", i, s.IsStub(), s.keptBytes(), len(s.GetAnnotations()))
		}
	}
	u := a.Usage()
	if len(u) != 1 || u[0].Snapshots != 1 || u[0].Foreign != 100 || u[0].SnapshotBytes != ours.keptBytes() || u[0].Registered != 1 {
		t.Fatalf("usage %+v, want 1 snapshot of %d bytes and 100 foreign stubs", u, ours.keptBytes())
	}
	if ours.keptBytes() > 1024 {
		t.Fatalf("the applied ConfigMap's snapshot keeps %d bytes", ours.keptBytes())
	}
}

// handled runs the watch handler on an update from old to new and returns what it reported.
func handled(old, new *Snapshot) []Change {
	var got []Change
	w := &Watches{OnChange: func(_ types.NamespacedName, c Change) { got = append(got, c) }}
	h := w.handler(target)
	if new == nil {
		h.OnDelete(old)
	} else {
		h.OnUpdate(old, new)
	}
	return got
}

// TestStubOfAnAppliedObjectAsksForComparison: an object whose snapshot was taken before it was
// registered (listed for another status object first) is read in full at its next version, and
// that version is compared with the cluster rather than lost; so is its deletion. A foreign
// object's change or deletion reports nothing.
func TestStubOfAnAppliedObjectAsksForComparison(t *testing.T) {
	a := NewApplied()
	c := a.Compactor(target)
	stub := transform(t, c, configMap(t, "u1", "1", "declared", ""))
	if !stub.IsStub() {
		t.Fatal("an unregistered object is kept in full")
	}
	edited := transform(t, c, configMap(t, "u1", "2", "edited", "", kubectlOwnsValue))
	if got := handled(stub, edited); len(got) != 0 {
		t.Fatalf("a foreign object's change reported: %+v", got)
	}

	a.Add(target, types.NamespacedName{Namespace: "fleet", Name: "shop-cluster-1"}, []ObjectRef{webRef})
	again := transform(t, c, configMap(t, "u1", "3", "declared", "")) // e.g. Holdfast's correction
	if again.IsStub() {
		t.Fatal("a registered object is still a stub")
	}
	got := handled(edited, again)
	if len(got) != 1 || !got[0].Compare || got[0].Object.GetName() != "web" {
		t.Fatalf("the first version of a registered object after its stub reported %+v, want a comparison", got)
	}
	if owners := a.Owners(target, webRef); len(owners) != 1 || owners[0].Name != "shop-cluster-1" {
		t.Fatalf("owners %v", owners)
	}
	// From then on, the watch compares versions itself.
	next := transform(t, c, configMap(t, "u1", "4", "edited-again", "", kubectlOwnsValue))
	if got := handled(again, next); len(got) != 1 || got[0].Compare || !got[0].Drifted {
		t.Fatalf("a change after the full snapshot: %+v, want a drift", got)
	}

	// A registered object deleted while its snapshot is a stub.
	a.Forget(types.NamespacedName{Namespace: "fleet", Name: "shop-cluster-1"})
	stubbed := transform(t, c, configMap(t, "u1", "5", "x", ""))
	a.Add(target, types.NamespacedName{Namespace: "fleet", Name: "shop-cluster-1"}, []ObjectRef{webRef})
	if got := handled(stubbed, nil); len(got) != 1 || !got[0].Compare {
		t.Fatalf("deletion of a registered object's stub reported %+v, want a comparison", got)
	}
}

// TestOversizedObjectsAreCompared: an applied object whose snapshot would keep more than
// MaxSnapshotBytes (here a large holdfast.dev/ annotation someone added) is a stub, and each
// new version of it asks for a comparison.
func TestOversizedObjectsAreCompared(t *testing.T) {
	a := NewApplied()
	a.Set(target, types.NamespacedName{Namespace: "fleet", Name: "shop-cluster-1"}, []ObjectRef{webRef})
	c := a.Compactor(target)
	before := transform(t, c, configMap(t, "u1", "1", "declared", ""))
	big := configMap(t, "u1", "2", "edited", "", kubectlOwnsValue)
	ann := big.GetAnnotations()
	ann["holdfast.dev/padding"] = strings.Repeat("p", MaxSnapshotBytes)
	big.SetAnnotations(ann)
	s := transform(t, c, big)
	if !s.IsStub() || s.keptBytes() > 64 {
		t.Fatalf("oversized object: stub %v, %d bytes kept", s.IsStub(), s.keptBytes())
	}
	if got := handled(before, s); len(got) != 1 || !got[0].Compare {
		t.Fatalf("an object growing over the bound reported %+v, want a comparison", got)
	}
	big.SetResourceVersion("3")
	s3 := transform(t, c, big)
	if got := handled(s, s3); len(got) != 1 || !got[0].Compare {
		t.Fatalf("a new version of an oversized object reported %+v, want a comparison", got)
	}
	if u := a.Usage()[0]; u.Oversized != 1 || u.Snapshots != 0 || u.SnapshotBytes != 0 {
		t.Fatalf("usage %+v", u)
	}
}

// TestForeignObjectsAreBoundedPerCluster: past the bound, a cluster's compactors refuse further
// foreign objects (and say so), never an applied one, and admit again once some are gone; other
// clusters are not affected.
func TestForeignObjectsAreBoundedPerCluster(t *testing.T) {
	a := NewApplied()
	a.MaxForeign = 3
	a.Set(target, types.NamespacedName{Namespace: "fleet", Name: "shop-cluster-1"}, []ObjectRef{webRef})
	c := a.Compactor(target)
	other := a.Compactor(types.NamespacedName{Namespace: "fleet", Name: "cluster-2"})
	var kept []*Snapshot
	for i := range 3 {
		kept = append(kept, transform(t, c, flooded(t, i, 10)))
	}
	if _, err := c.Transform(flooded(t, 3, 10)); !errors.Is(err, ErrTooManyForeignObjects) || !strings.Contains(err.Error(), "fleet/cluster-1") {
		t.Fatalf("the fourth foreign object: %v", err)
	}
	// A relist of what is kept passes; the applied object too; another cluster has its own bound.
	transform(t, c, flooded(t, 0, 10))
	transform(t, c, configMap(t, "u1", "1", "declared", ""))
	for i := range 3 {
		transform(t, other, flooded(t, i, 10))
	}
	u := a.Usage()
	if !u[0].Over || u[0].Refused != 1 || u[0].Foreign != 3 || a.Note(target) == "" || u[1].Over {
		t.Fatalf("usage %+v, note %q", u, a.Note(target))
	}
	handled(kept[0], nil) // deleted: forgotten
	transform(t, c, flooded(t, 3, 10))
	if u := a.Usage()[0]; u.Foreign != 3 || u.Over {
		t.Fatalf("after a deletion: %+v", u)
	}
	c.Release()
	if u := a.Usage()[0]; u.Foreign != 0 || u.Snapshots != 0 {
		t.Fatalf("after the compactor's release: %+v", u)
	}
}

// TestAddKeepsTheRecordSorted: keys added one by one (a correction's) and many at once (a
// deploy's) are each found by Owners afterwards, with those registered before, and each is
// counted once whatever adds it again.
func TestAddKeepsTheRecordSorted(t *testing.T) {
	a := NewApplied()
	status := types.NamespacedName{Namespace: "fleet", Name: "set.cluster-1"}
	ref := func(i int) ObjectRef {
		return ObjectRef{Kind: "ConfigMap", Namespace: fmt.Sprintf("ns-%d", i%3), Name: fmt.Sprintf("cm-%05d", i)}
	}
	var initial []ObjectRef
	for i := 0; i < 1000; i += 2 {
		initial = append(initial, ref(i))
	}
	a.Set(target, status, initial)
	// Odd ones: a few at a time (in place), then many at once (sorted whole), then again.
	for i := 1; i < 40; i += 2 {
		a.Add(target, status, []ObjectRef{ref(i), ref(i)})
	}
	var many []ObjectRef
	for i := 41; i < 1000; i += 2 {
		many = append(many, ref(i))
	}
	a.Add(target, status, many)
	a.Add(target, status, many[:3])
	for i := range 1000 {
		if owners := a.Owners(target, ref(i)); len(owners) != 1 || owners[0] != status {
			t.Fatalf("Owners(%v) = %v, want %v", ref(i), owners, status)
		}
	}
	c := a.clusters[target]
	if got := c.byStatus[status]; len(got) != 1000 || !slices.IsSortedFunc(got, compareKeys) {
		t.Fatalf("%d keys, sorted: %v", len(got), slices.IsSortedFunc(got, compareKeys))
	}
	for i := range 1000 {
		if n := c.count[ref(i).key()]; n != 1 {
			t.Fatalf("%v counted %d times", ref(i), n)
		}
	}
}

// BenchmarkAddOneToALargeRecord is a correction's registration of the object it puts back, an
// object of a 20,000-object inventory registered without its namespace too (as declared).
func BenchmarkAddOneToALargeRecord(b *testing.B) {
	a := NewApplied()
	status := types.NamespacedName{Namespace: "fleet", Name: "set.cluster-1"}
	refs := make([]ObjectRef, 20000)
	for i := range refs {
		refs[i] = ObjectRef{Kind: "ConfigMap", Namespace: "bench", Name: fmt.Sprintf("cm-%05d", i)}
	}
	a.Set(target, status, refs)
	b.ResetTimer()
	for i := range b.N {
		r := refs[i%len(refs)]
		a.Add(target, status, []ObjectRef{r, {Kind: r.Kind, Name: fmt.Sprintf("%s-%d", r.Name, i)}})
	}
}

package clusterservicestatus

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/rendercache"
	"holdfast.dev/holdfast/internal/testsupport"
)

func record(name string) holdfastv1.DriftRecord {
	return holdfastv1.DriftRecord{ResourceRef: holdfastv1.ResourceRef{Version: "v1", Kind: "ConfigMap", Name: name}}
}

// holds reports whether any part of memory holds something for key.
func (m *memory) holds(key types.NamespacedName) bool {
	_, drifts := m.drifts.get(key)
	_, recheck := m.rechecks.get(key)
	_, compared := m.compared.get(key)
	_, recorded := m.recorded.get(key)
	_, notes := m.notes.get(key)
	return drifts || recheck || compared || recorded || notes || m.declared.get(key) != nil
}

// statusObjects is how many status objects memory holds anything for.
func (m *memory) statusObjects() int {
	keys := map[types.NamespacedName]bool{}
	for _, held := range [][]types.NamespacedName{m.drifts.keys(), m.rechecks.keys(), m.compared.keys(), m.recorded.keys(), m.notes.keys(), m.declared.keys()} {
		for _, k := range held {
			keys[k] = true
		}
	}
	return len(keys)
}

func TestMemoryKeepsTheNewestDriftsAndReturnsThemFirst(t *testing.T) {
	m := newMemory()
	key := types.NamespacedName{Namespace: "fleet", Name: "web.c1"}
	for i := range holdfastv1.MaxDriftRecords + 5 {
		if !m.addDrift(key, "c1", record(fmt.Sprint(i))) {
			t.Fatalf("drift %d dropped", i)
		}
	}
	taken := m.takeDrifts(key)
	if len(taken) != holdfastv1.MaxDriftRecords || taken[0].Name != "5" || taken[len(taken)-1].Name != fmt.Sprint(holdfastv1.MaxDriftRecords+4) {
		t.Fatalf("took %d drifts from %s to %s, want the newest %d", len(taken), taken[0].Name, taken[len(taken)-1].Name, holdfastv1.MaxDriftRecords)
	}
	if again := m.takeDrifts(key); len(again) != 0 {
		t.Fatalf("drifts taken twice: %v", again)
	}
	m.addDrift(key, "c1", record("later"))
	m.returnDrifts(key, "c1", taken[:2])
	back := m.takeDrifts(key)
	if len(back) != 3 || back[0].Name != "5" || back[2].Name != "later" {
		t.Fatalf("after returning two, took %v; want the returned ones before the later one", back)
	}
	if m.statusObjects() != 0 {
		t.Fatalf("%d entries kept for nothing", m.statusObjects())
	}
}

func TestMemoryIsBounded(t *testing.T) {
	m := newMemory()
	for i := range maxPendingStatuses {
		if !m.addDrift(types.NamespacedName{Namespace: "fleet", Name: fmt.Sprint("made-up-", i)}, "c1", record("x")) {
			t.Fatalf("drift of status object %d dropped below the bound", i)
		}
	}
	over := types.NamespacedName{Namespace: "fleet", Name: "one-more"}
	if m.addDrift(over, "c1", record("x")) {
		t.Fatal("a drift for one status object more than the bound was kept")
	}
	if m.statusObjects() != maxPendingStatuses {
		t.Fatalf("%d entries, want %d", m.statusObjects(), maxPendingStatuses)
	}
	// A status object that already holds drifts still gets more.
	if !m.addDrift(types.NamespacedName{Namespace: "fleet", Name: "made-up-0"}, "c1", record("y")) {
		t.Fatal("a further drift of a status object already pending was dropped")
	}
	// Taking one frees a place.
	m.takeDrifts(types.NamespacedName{Namespace: "fleet", Name: "made-up-1"})
	if !m.addDrift(over, "c1", record("x")) {
		t.Fatal("no place after a reconcile took a status object's drifts")
	}
}

// TestMemoryStaysBoundedUnderMadeUpOwners: 20,000 status objects nobody made, as owner
// annotations on a hostile target could name them, cannot grow memory past its bounds, whether
// they come as drifts (onDrift marks a recheck when a drift does not fit) or as recheck marks.
func TestMemoryStaysBoundedUnderMadeUpOwners(t *testing.T) {
	m := newMemory()
	const owners = 20000
	name := func(prefix string, i int) types.NamespacedName {
		return types.NamespacedName{Namespace: "fleet", Name: fmt.Sprint(prefix, i, ".c1")}
	}
	for i := range owners {
		if key := name("drifted-", i); !m.addDrift(key, "c1", record("x")) {
			m.markRecheck(key, "c1")
		}
		m.markRecheck(name("marked-", i), "c1")
	}
	if m.statusObjects() > 2*maxPendingStatuses {
		t.Fatalf("%d entries for %d made-up owners, want at most %d", m.statusObjects(), 2*owners, 2*maxPendingStatuses)
	}
	if m.drifts.len() != maxPendingStatuses || m.rechecks.len() != maxPendingStatuses {
		t.Fatalf("%d status objects with drifts and %d with a recheck mark, want %d each", m.drifts.len(), m.rechecks.len(), maxPendingStatuses)
	}

	// A mark already held is kept; a new one is refused until a reconcile takes one.
	held := name("marked-", 0)
	if !m.markRecheck(held, "c1") {
		t.Fatal("a recheck mark a status object holds already was refused")
	}
	if m.markRecheck(name("drifted-", 0), "c1") {
		t.Fatal("a new recheck mark over the bound was kept")
	}
	over := name("one-more-", 0)
	if m.markRecheck(over, "c1") {
		t.Fatal("a recheck mark for one status object more than the bound was kept")
	}
	if !m.takeRecheck(held) || !m.markRecheck(over, "c1") {
		t.Fatal("no place for a recheck mark after a reconcile took one")
	}
	if m.statusObjects() > 2*maxPendingStatuses {
		t.Fatalf("%d entries, want at most %d", m.statusObjects(), 2*maxPendingStatuses)
	}
}

func TestMemoryForgetsStatusObjectsAndClusters(t *testing.T) {
	// Through the reconciler, which forgets the fights of a status object with its memory.
	r := &Reconciler{memory: newMemory(), fights: &drift.Fights{}, Applied: drift.NewApplied()}
	m := r.memory
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	a1 := types.NamespacedName{Namespace: "fleet", Name: "a.c1"}
	b1 := types.NamespacedName{Namespace: "fleet", Name: "b.c1"}
	a2 := types.NamespacedName{Namespace: "fleet", Name: "a.c2"}
	other := types.NamespacedName{Namespace: "team", Name: "a.c1"} // a Cluster c1 in another namespace
	for _, k := range []types.NamespacedName{a1, b1, a2, other} {
		cluster := "c1"
		if k == a2 {
			cluster = "c2"
		}
		m.addDrift(k, cluster, record("x"))
		m.markRecheck(k, cluster)
		m.setCompared(k, cluster, now)
		r.fights.Decide(drift.ObjectKey{Status: k, Kind: "ConfigMap", Name: "x"}, now, drift.FightRules{Limit: 5, Window: time.Minute, Stop: true}, false)
	}

	r.forgetStatus(b1)
	if _, ok := m.lastCompared(b1); ok || m.takeRecheck(b1) || len(m.takeDrifts(b1)) != 0 {
		t.Fatal("a deleted status object is still remembered")
	}
	r.forgetCluster(types.NamespacedName{Namespace: "fleet", Name: "c1"})
	if _, ok := m.lastCompared(a1); ok {
		t.Fatal("a status object of a deleted Cluster is still remembered")
	}
	for _, k := range []types.NamespacedName{a2, other} {
		if _, ok := m.lastCompared(k); !ok || !m.takeRecheck(k) || len(m.takeDrifts(k)) != 1 {
			t.Fatalf("%s, of another Cluster, was forgotten", k)
		}
	}
	if m.drifts.len() != 0 || m.rechecks.len() != 0 {
		t.Fatalf("counts %d pending, %d rechecks after every drift and mark was taken or forgotten", m.drifts.len(), m.rechecks.len())
	}
	// Fights of forgotten status objects are gone; the others' stay.
	for k, want := range map[types.NamespacedName]bool{a1: false, b1: false, a2: true, other: true} {
		key := drift.ObjectKey{Status: k, Kind: "ConfigMap", Name: "x"}
		// With a limit of 1, a correction is refused exactly when one is remembered.
		if remembered := !r.fights.Decide(key, now, drift.FightRules{Limit: 1, Window: time.Minute, Stop: true}, false).Correct; remembered != want {
			t.Fatalf("fights of %s remembered = %v, want %v", k, remembered, want)
		}
	}
}

func TestMemoryRecheckAndCompared(t *testing.T) {
	m := newMemory()
	key := types.NamespacedName{Namespace: "fleet", Name: "a.c1"}
	if m.takeRecheck(key) {
		t.Fatal("recheck without a mark")
	}
	m.markRecheck(key, "c1")
	if !m.takeRecheck(key) || m.takeRecheck(key) {
		t.Fatal("a recheck mark is not taken exactly once")
	}
	if _, ok := m.lastCompared(key); ok {
		t.Fatal("compared before any comparison")
	}
	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	m.setCompared(key, "c1", at)
	if got, ok := m.lastCompared(key); !ok || !got.Equal(at) {
		t.Fatalf("lastCompared = %v, %v", got, ok)
	}
}

// TestMemoryBoundsDeclarations: over maxDeclared bytes, the status objects whose declarations
// were used least recently lose them (and only their declarations); a lookup counts as a use.
func TestMemoryBoundsDeclarations(t *testing.T) {
	m := newMemory()
	declared := func(n int) map[string]*rendercache.Declaration {
		var objs []*unstructured.Unstructured
		for i := range n {
			objs = append(objs, testsupport.Object("v1", "ConfigMap", "apps", fmt.Sprintf("cm-%d", i), map[string]any{"i": int64(i)}))
		}
		d, err := rendercache.NewDeclaration("in", &render.Result{Objects: objs, Digest: "out"}, "apps")
		if err != nil {
			t.Fatal(err)
		}
		return map[string]*rendercache.Declaration{"web": d}
	}
	one := declared(10)["web"].Size()
	m.declared.max = 3*one + one/2 // room for three
	keys := make([]types.NamespacedName, 5)
	for i := range keys {
		keys[i] = types.NamespacedName{Namespace: "fleet", Name: fmt.Sprintf("web.c%d", i)}
	}
	m.setCompared(keys[0], "c0", time.Now()) // something else remembered of keys[0]
	for _, k := range keys[:3] {
		m.setDeclarations(k, "c", declared(10))
	}
	if m.declarations(keys[0]) == nil { // used: keys[1] is now the least recently used
		t.Fatal("within the bound, a declaration was dropped")
	}
	m.setDeclarations(keys[3], "c", declared(10))
	if m.declarations(keys[1]) != nil {
		t.Error("over the bound, the least recently used declarations stayed")
	}
	for _, k := range []types.NamespacedName{keys[0], keys[2], keys[3]} {
		if m.declarations(k) == nil {
			t.Errorf("%s lost its declarations, though used more recently", k)
		}
	}
	if _, known := m.declares(keys[1], "web", apply.Ref{Kind: "ConfigMap", Namespace: "apps", Name: "cm-1"}); known {
		t.Error("dropped declarations still tell watch events apart")
	}
	if m.declared.bytes != 3*one {
		t.Errorf("declaredBytes = %d, want %d", m.declared.bytes, 3*one)
	}
	// Replaced, forgotten, or alone over the bound: the count follows.
	m.setDeclarations(keys[0], "c", declared(10))
	m.forget(keys[2])
	if m.declared.bytes != 2*one {
		t.Errorf("after a replacement and a forget, declaredBytes = %d, want %d", m.declared.bytes, 2*one)
	}
	if _, ok := m.lastCompared(keys[0]); !ok {
		t.Error("replacing declarations forgot what else was remembered")
	}
	m.setDeclarations(keys[4], "c", declared(200))
	if m.declarations(keys[4]) != nil || m.declarations(keys[0]) == nil || m.declared.bytes != 2*one {
		t.Errorf("declarations alone over the bound: kept, or others dropped for them (%d bytes of %d)", m.declared.bytes, m.declared.max)
	}
	m.setDeclarations(keys[0], "c", nil)
	m.setDeclarations(keys[3], "c", nil)
	if m.declared.bytes != 0 || m.declared.used.Len() != 0 {
		t.Errorf("nothing declared: %d bytes, %d status objects still counted", m.declared.bytes, m.declared.used.Len())
	}
	if m.holds(keys[3]) {
		t.Error("an entry that holds nothing was kept")
	}
}

func TestRecordedStatusHoldsOnlyEntriesNotInSync(t *testing.T) {
	m := newMemory()
	key := types.NamespacedName{Namespace: "fleet", Name: "web.c1"}
	entry := func(name string, state holdfastv1.ResourceState) holdfastv1.ResourceStatus {
		return holdfastv1.ResourceStatus{ResourceRef: holdfastv1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: name}, State: state}
	}
	css := &holdfastv1.ClusterServiceStatus{}
	css.ResourceVersion = "12"
	css.Status.Resources = []holdfastv1.ResourceStatus{entry("a", holdfastv1.ResourceInSync), entry("b", holdfastv1.ResourceContested), entry("c", holdfastv1.ResourceInSync)}
	m.setRecorded(key, "c1", css, "9")

	for _, rv := range []string{"12", "9"} {
		rec := m.recordedAt(key, rv)
		if rec == nil {
			t.Fatalf("nothing recorded at %s", rv)
		}
		if len(rec.unusual) != 1 || rec.unusual[drift.Ref{Kind: "ConfigMap", Namespace: "apps", Name: "b"}].State != holdfastv1.ResourceContested {
			t.Errorf("unusual entries %v, want b Contested only", rec.unusual)
		}
	}
	if m.recordedAt(key, "13") != nil {
		t.Error("a version someone else wrote: the record was used")
	}
	// Written again over it, twice, and read back: the cache may still hold any of 9, 12, 14.
	css.ResourceVersion = "14"
	m.setRecorded(key, "c1", css, "12")
	css.ResourceVersion = "16"
	m.setRecorded(key, "c1", css, "14")
	m.setRecorded(key, "c1", css, "")
	for _, rv := range []string{"9", "12", "14", "16"} {
		if m.recordedAt(key, rv) == nil {
			t.Errorf("our own chain of writes: version %s not accepted", rv)
		}
	}
	css.ResourceVersion = "20"
	m.setRecorded(key, "c1", css, "18") // over a version someone else wrote
	if m.recordedAt(key, "16") != nil || m.recordedAt(key, "18") == nil {
		t.Error("a write over someone else's version: the chain before it is still accepted")
	}
	css.ResourceVersion = "12"
	m.setRecorded(key, "c1", css, "")
	if m.recordedAt(key, "9") != nil {
		t.Error("recorded as read: the version before was accepted")
	}

	// Too many entries not InSync: nothing is recorded, the whole object is read instead.
	css.Status.Resources = nil
	for i := range maxUnusual + 1 {
		css.Status.Resources = append(css.Status.Resources, entry(fmt.Sprint(i), holdfastv1.ResourceFailed))
	}
	m.setRecorded(key, "c1", css, "")
	if m.recordedAt(key, "12") != nil {
		t.Error("over maxUnusual: still recorded")
	}
	m.forget(key)
	if n := m.statusObjects(); n != 0 {
		t.Errorf("%d status objects held after forget", n)
	}
}

// keys are the status objects the part holds something for.
func (p *part[T]) keys() []types.NamespacedName {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Collect(maps.Keys(p.held))
}

// keys are the status objects the store holds declarations for.
func (d *declarationStore) keys() []types.NamespacedName { return d.held.keys() }

// TestUnrecordedChangesAreTold: each change of the records waiting for a status patch is told,
// with what waits after it, so that an agent keeps them past a restart (UnrecordedStore).
func TestUnrecordedChangesAreTold(t *testing.T) {
	m := newMemory()
	key := types.NamespacedName{Namespace: "holdfast-pull-edge", Name: "web-edge"}
	var told [][]holdfastv1.DriftRecord
	m.unrecordedChanged = func(k types.NamespacedName, cluster string, records []holdfastv1.DriftRecord) {
		if k != key {
			t.Errorf("told of %v, want %v", k, key)
		}
		told = append(told, records)
	}
	rec := func(name string) holdfastv1.DriftRecord {
		return holdfastv1.DriftRecord{ResourceRef: holdfastv1.ResourceRef{Kind: "ConfigMap", Name: name},
			DriftDetail: holdfastv1.DriftDetail{DetectedTime: metav1.NowMicro()}}
	}
	a, b := rec("a"), rec("b")
	m.keepUnrecorded(key, "edge", []holdfastv1.DriftRecord{a})
	m.keepUnrecorded(key, "edge", []holdfastv1.DriftRecord{b})
	m.forgetUnrecorded(key, "edge", []holdfastv1.DriftRecord{a})
	m.forget(key)
	names := func(rs []holdfastv1.DriftRecord) (out []string) {
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	var got [][]string
	for _, rs := range told {
		got = append(got, names(rs))
	}
	want := [][]string{{"a"}, {"b", "a"}, {"b"}, nil}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("told %v, want %v", got, want)
	}
}

// TestCachedIsCurrent: where the cache holds whole status objects (an agent's), a cached copy
// replaces a read of the API server unless it is a version this process's own status writes
// replaced: the cache has yet to see the write.
func TestCachedIsCurrent(t *testing.T) {
	m := newMemory()
	key := types.NamespacedName{Namespace: "fleet", Name: "web.edge"}
	if !cachedIsCurrent(m.lastRecorded(key), "7", "7") || !cachedIsCurrent(m.lastRecorded(key), "9", "7") {
		t.Error("with nothing recorded, the cached copy (at least the version the reconcile began from) was refused")
	}
	write := func(rv, replaced string) {
		m.setRecorded(key, "edge", &holdfastv1.ClusterServiceStatus{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}, replaced)
	}
	write("10", "7")
	write("12", "10")
	rec := m.lastRecorded(key)
	for _, c := range []struct {
		cached, atLeast string
		want            bool
	}{
		{"12", "12", true},  // the last write, seen by the cache
		{"15", "12", true},  // a newer version, the hub's
		{"10", "12", false}, // a version the last write replaced
		{"7", "12", false},  // and the one before it
		{"10", "10", true},  // a reconcile that asks for no newer one
	} {
		if got := cachedIsCurrent(rec, c.cached, c.atLeast); got != c.want {
			t.Errorf("cached %s, at least %s: %v, want %v", c.cached, c.atLeast, got, c.want)
		}
	}
}

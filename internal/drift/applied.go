package drift

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unique"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
)

// What a target cluster's drift watches may make the controller keep. The caches select objects
// by the label holdfast.dev/managed-by, which anyone who may create an object on a target can
// set: without these bounds, labelled objects with large holdfast.dev/ annotations would fill the
// controller's memory (issue 27, finding 2).
const (
	// MaxSnapshotBytes bounds what a Snapshot of one object Holdfast applied keeps: its
	// holdfast.dev/ labels and annotations, its field set and the encodings of its owned values
	// (SnapshotBytes). An object over it is kept as a stub marked oversized, and every new
	// version of it is compared with the cluster by its status object's reconcile (a GET)
	// instead of by the watch: its drift is found that way, never lost. Objects Holdfast
	// declares stay far below it (a Deployment's snapshot takes a few kilobytes).
	MaxSnapshotBytes = 64 << 10
	// MaxForeignObjects bounds, per target cluster, the stubs kept of labelled objects Holdfast
	// did not apply (about 200 bytes each with the informer's index: some 20 MiB). Past it the
	// watches refuse further ones (ErrTooManyForeignObjects): a watch event of one is dropped,
	// and a list that holds more fails and is retried by client-go with backoff, so the watch
	// of that kind on that cluster may miss changes. Until the labelled objects fall under the
	// bound, drift on that cluster is found by full reconciles, its status objects' Drifted
	// condition says so (Applied.Notes), holdfast_target_cache_refused_objects_total counts
	// the refusals and a log line names the cluster. Other clusters are not affected.
	MaxForeignObjects = 100_000
)

// ErrTooManyForeignObjects is the error of a cache transform that refuses a labelled object
// Holdfast did not apply, past MaxForeignObjects on its cluster.
var ErrTooManyForeignObjects = errors.New("too many labelled objects Holdfast did not apply")

// objectKey identifies an object on a cluster whatever the version it is read at.
type objectKey struct {
	group, kind, namespace unique.Handle[string]
	name                   string
}

// ObjectRef names an object on a target cluster; the version does not matter.
type ObjectRef struct {
	Group, Kind, Namespace, Name string
}

func (r ObjectRef) key() objectKey {
	return objectKey{group: intern(r.Group), kind: intern(r.Kind), namespace: intern(r.Namespace), name: r.Name}
}

// Applied is what Holdfast applied to each target cluster, by status object: the inventories
// the ClusterServiceStatus controller loads and writes, as object references only. The target
// caches' Compactors (Applied.Transform) keep a full Snapshot of these objects alone; any other
// labelled object is kept as a stub with its identity, which the watch ignores. It also accounts
// for what those caches keep per cluster (Usage) and bounds it (MaxSnapshotBytes,
// MaxForeignObjects). It is safe for concurrent use: reconciles write it, informers read it.
//
// The controller registers an object before it applies it (Add), so the watch event that
// follows an apply always finds it registered. An object whose snapshot was taken while it was
// not registered (an object another status object of the cluster applied, listed before that
// status object's first reconcile after a start) is read in full at its next event, and that
// event asks its status objects for a comparison with the cluster rather than being compared
// with the stub: its drift is found either way.
type Applied struct {
	// MaxForeign overrides MaxForeignObjects when positive (tests).
	MaxForeign int64

	mu       sync.RWMutex
	clusters map[types.NamespacedName]*clusterApplied
}

// clusterApplied is Applied's record of one cluster.
type clusterApplied struct {
	cluster types.NamespacedName
	// count is how many status objects registered each object; byStatus what each registered,
	// sorted.
	count    map[objectKey]int32
	byStatus map[types.NamespacedName][]objectKey

	// foreign is the number of stubs of unregistered objects the cluster's compactors keep.
	foreign atomic.Int64
	// refused counts the objects refused past the bound; overLogged is set while the log line
	// of the last crossing stands.
	refused    atomic.Int64
	overLogged atomic.Bool
	// compactors are the cluster's live compactors, whose usage Usage sums.
	compactors map[*Compactor]struct{}
}

// NewApplied returns an empty record.
func NewApplied() *Applied { return &Applied{clusters: map[types.NamespacedName]*clusterApplied{}} }

func (a *Applied) maxForeign() int64 {
	if a.MaxForeign > 0 {
		return a.MaxForeign
	}
	return MaxForeignObjects
}

// of returns the record of cluster, made if needed; a.mu is held for writing.
func (a *Applied) of(cluster types.NamespacedName) *clusterApplied {
	c := a.clusters[cluster]
	if c == nil {
		c = &clusterApplied{cluster: cluster, count: map[objectKey]int32{}, byStatus: map[types.NamespacedName][]objectKey{},
			compactors: map[*Compactor]struct{}{}}
		a.clusters[cluster] = c
	}
	return c
}

// Set makes refs what status, a status object of cluster, applied there: its inventory as last
// loaded or written.
func (a *Applied) Set(cluster, status types.NamespacedName, refs []ObjectRef) {
	keys := keysOf(refs)
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.of(cluster)
	for _, k := range c.byStatus[status] {
		c.release(k)
	}
	for _, k := range keys {
		c.count[k]++
	}
	if len(keys) == 0 {
		delete(c.byStatus, status)
		return
	}
	c.byStatus[status] = keys
}

// Add adds refs to what status applied on cluster, before they are applied.
func (a *Applied) Add(cluster, status types.NamespacedName, refs []ObjectRef) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.of(cluster)
	have := c.byStatus[status]
	var added []objectKey
	for _, k := range keysOf(refs) {
		if _, found := slices.BinarySearchFunc(have, k, compareKeys); !found {
			added = append(added, k)
			c.count[k]++
		}
	}
	switch {
	case len(added) == 0:
		return
	case len(added) <= maxInsertedInPlace:
		// A correction's object or two, into an inventory of up to many thousands: each put in
		// its place, not the whole sorted again (2 ms at 20,000 objects, on the correction's
		// path before its apply).
		for _, k := range added {
			i, _ := slices.BinarySearchFunc(have, k, compareKeys)
			have = slices.Insert(have, i, k)
		}
	default:
		have = append(have, added...)
		slices.SortFunc(have, compareKeys)
	}
	c.byStatus[status] = have
}

// maxInsertedInPlace is how many keys Add puts in their places one by one; more are appended and
// the whole sorted once.
const maxInsertedInPlace = 8

// Forget drops what status applied, for a status object that is gone.
func (a *Applied) Forget(status types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.clusters {
		for _, k := range c.byStatus[status] {
			c.release(k)
		}
		delete(c.byStatus, status)
	}
}

// ForgetCluster drops the record of a cluster this process no longer connects to, and releases
// its compactors.
func (a *Applied) ForgetCluster(cluster types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.clusters[cluster]; c != nil {
		for comp := range c.compactors {
			c.releaseLocked(comp)
		}
		delete(a.clusters, cluster)
	}
}

// Owners returns the status objects of cluster that registered ref.
func (a *Applied) Owners(cluster types.NamespacedName, ref ObjectRef) []types.NamespacedName {
	k := ref.key()
	a.mu.RLock()
	defer a.mu.RUnlock()
	c := a.clusters[cluster]
	if c == nil || c.count[k] == 0 {
		return nil
	}
	var out []types.NamespacedName
	for status, keys := range c.byStatus {
		if _, found := slices.BinarySearchFunc(keys, k, compareKeys); found {
			out = append(out, status)
		}
	}
	return out
}

// release drops one registration of k; a.mu is held for writing.
func (c *clusterApplied) release(k objectKey) {
	if c.count[k] <= 1 {
		delete(c.count, k)
		return
	}
	c.count[k]--
}

// registered reports whether an object is in an inventory of the cluster.
func (a *Applied) registered(cluster types.NamespacedName, k objectKey) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	c := a.clusters[cluster]
	return c != nil && c.count[k] > 0
}

// Transform returns the cache transform of a new connection to cluster (fleet.Options
// CacheTransform): a Compactor that keeps full snapshots of registered objects only. The
// compactor of the connection it replaces, if any, is released.
func (a *Applied) Transform(cluster types.NamespacedName) toolscache.TransformFunc {
	comp := a.newCompactor(cluster, true)
	return comp.Transform
}

// Compactor returns a new compactor for one informer of cluster's outside its cache
// (Watches.EnsureIn); Release lets go of it.
func (a *Applied) Compactor(cluster types.NamespacedName) *Compactor {
	return a.newCompactor(cluster, false)
}

func (a *Applied) newCompactor(cluster types.NamespacedName, cache bool) *Compactor {
	comp := NewCompactor()
	comp.applied, comp.cluster, comp.ofCache = a, cluster, cache
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.of(cluster)
	if cache {
		for old := range c.compactors {
			if old.ofCache {
				c.releaseLocked(old)
			}
		}
	}
	c.compactors[comp] = struct{}{}
	return comp
}

// release stops counting what comp keeps, for an informer that stopped.
func (a *Applied) release(comp *Compactor) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.clusters[comp.cluster]; c != nil {
		c.releaseLocked(comp)
	}
}

// releaseLocked stops counting comp; a.mu is held for writing.
func (c *clusterApplied) releaseLocked(comp *Compactor) {
	if _, ok := c.compactors[comp]; !ok {
		return
	}
	comp.released.Store(true)
	delete(c.compactors, comp)
	c.foreign.Add(-comp.usage.foreign.Load())
}

// admitForeign counts a new stub of an unregistered object of cluster, or refuses it past the
// bound: the first refusal of a crossing is logged, naming the cluster.
func (a *Applied) admitForeign(cluster types.NamespacedName, gvk schema.GroupVersionKind) error {
	a.mu.RLock()
	c := a.clusters[cluster]
	a.mu.RUnlock()
	if c == nil {
		return nil
	}
	if n := c.foreign.Add(1); n > a.maxForeign() {
		c.foreign.Add(-1)
		c.refused.Add(1)
		if c.overLogged.CompareAndSwap(false, true) {
			ctrl.Log.WithName("drift").Info("Target cluster holds too many labelled objects Holdfast did not apply; refusing more, drift there is found by full reconciles",
				"cluster", cluster.String(), "kind", gvk.Kind, "limit", a.maxForeign())
		}
		return fmt.Errorf("cluster %s, %s: %w (limit %d)", cluster, gvk.Kind, ErrTooManyForeignObjects, a.maxForeign())
	}
	return nil
}

// dropForeign uncounts a stub of an unregistered object of cluster.
func (a *Applied) dropForeign(cluster types.NamespacedName) {
	a.mu.RLock()
	c := a.clusters[cluster]
	a.mu.RUnlock()
	if c == nil {
		return
	}
	if c.foreign.Add(-1) < a.maxForeign() {
		c.overLogged.Store(false)
	}
}

// Usage is what the target caches of one cluster keep.
type Usage struct {
	Cluster types.NamespacedName
	// Snapshots and SnapshotBytes count the full snapshots of objects Holdfast applied and
	// their SnapshotBytes; Oversized counts those over MaxSnapshotBytes, kept as stubs.
	Snapshots, SnapshotBytes, Oversized int64
	// Foreign counts the stubs of labelled objects Holdfast did not apply (at most
	// MaxForeignObjects); Refused the objects refused past that bound so far, and Over says
	// whether the cluster is past it now.
	Foreign, Refused int64
	Over             bool
	// Registered is how many objects the cluster's inventories hold.
	Registered int64
}

// Usage reports what the target caches keep, one entry per cluster, sorted by cluster.
func (a *Applied) Usage() []Usage {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]Usage, 0, len(a.clusters))
	for key, c := range a.clusters {
		u := Usage{Cluster: key, Foreign: c.foreign.Load(), Refused: c.refused.Load(), Over: c.overLogged.Load(), Registered: int64(len(c.count))}
		for comp := range c.compactors {
			u.Snapshots += comp.usage.full.Load()
			u.SnapshotBytes += comp.usage.bytes.Load()
			u.Oversized += comp.usage.oversized.Load()
		}
		out = append(out, u)
	}
	slices.SortFunc(out, func(x, y Usage) int { return strings.Compare(x.Cluster.String(), y.Cluster.String()) })
	return out
}

// Note is what a status object of cluster says in its Drifted condition about the cluster's
// watches, or "" when they hold everything.
func (a *Applied) Note(cluster types.NamespacedName) string {
	a.mu.RLock()
	c := a.clusters[cluster]
	a.mu.RUnlock()
	if c == nil || !c.overLogged.Load() {
		return ""
	}
	return fmt.Sprintf("the cluster holds more than %d labelled objects Holdfast did not apply: its watches refuse the rest and may miss changes, drift is found at full reconciles until there are fewer", a.maxForeign())
}

func keysOf(refs []ObjectRef) []objectKey {
	keys := make([]objectKey, 0, len(refs))
	for _, r := range refs {
		keys = append(keys, r.key())
	}
	slices.SortFunc(keys, compareKeys)
	return slices.CompactFunc(keys, func(x, y objectKey) bool { return x == y })
}

func compareKeys(x, y objectKey) int {
	return cmp.Or(strings.Compare(value(x.group), value(y.group)), strings.Compare(value(x.kind), value(y.kind)),
		strings.Compare(value(x.namespace), value(y.namespace)), strings.Compare(x.name, y.name))
}

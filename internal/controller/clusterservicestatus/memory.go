package clusterservicestatus

import (
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/inventory"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/rendercache"
)

// maxPendingStatuses bounds how many status objects can hold drifts the watches saw and no
// reconcile has taken yet, and, apart, how many can hold a recheck mark (part.bound). Objects
// on a target carry their owner in an annotation anyone with write access there can set; the
// drift watches accept only owners whose status object exists for that cluster (onDrift), and
// the bound holds whatever the callers: a hostile cluster cannot make the controller remember
// things for any number of status objects. A drift dropped over the bound is not lost: a
// recheck mark makes its reconcile compare with the cluster and find it again (detection
// Comparison), and a status object refused both is compared at its next full reconcile.
const maxPendingStatuses = 10000

// maxDeclaredBytes bounds what the declarations of all status objects hold (Declaration.Size):
// about 128 MiB of compressed manifests, several GiB of YAML. Over it, the status objects whose
// declarations were used least recently lose them, as after a restart: their next full
// reconcile renders, their drift is corrected after a render, and changes to labelled objects
// they do not declare bring a reconcile rather than being told apart at once.
const maxDeclaredBytes = 128 << 20

// memory is what this process knows about status objects between their reconciles, kept apart
// from the API server because it is written from informer goroutines (the drift watches), map
// functions and reconciles at once. It is made of parts, one per kind of thing, each under a
// lock of its own (no method reads two parts together); each part says whether it carries
// correctness (what it holds is found again only by a comparison with the cluster) or is a
// cache (what it holds is found again by reading or rendering).
//
// It lives in memory by design: a restart forgets it, and the first reconcile of each status
// object after a start compares with the cluster, which finds what was pending. It forgets a
// status object when the object is gone and every status object of a Cluster that is gone, and
// it holds pending drifts for at most maxPendingStatuses status objects, MaxDriftRecords each,
// and recheck marks for at most as many (drifts a reconcile took and puts back are never refused,
// which can go over the bound by the reconciles under way), and declarations up to
// maxDeclaredBytes. It is safe for concurrent use.
type memory struct {
	// drifts carries correctness: the drifts watches saw since the last reconcile took them,
	// oldest first, for at most maxPendingStatuses status objects.
	drifts *part[[]holdfastv1.DriftRecord]
	// unrecorded carries correctness: the drift records of drifts put back whose status patch
	// failed (the hub away), newest first, at most MaxDriftRecords for each of at most
	// maxPendingStatuses status objects, until a status patch writes them.
	unrecorded *part[[]holdfastv1.DriftRecord]
	// rechecks carries correctness: the status objects whose next reconcile compares with the
	// cluster even if nothing is due, at most maxPendingStatuses.
	rechecks *part[struct{}]
	// compared is a cache of when this process last compared a status object's objects with
	// the cluster (a restart forgets it, and the first reconcile then compares).
	compared *part[time.Time]
	// declared is a cache of what each service declared at its last render, bounded by bytes.
	declared *declarationStore
	// recorded is a cache of what a status object held when this process last wrote or read it
	// whole; without it a drift correction reads the whole object first.
	recorded *part[*recorded]
	// notes is a cache of what the cluster's watches of this status object's kinds cover
	// less than everywhere (watchInventory), as the last full reconcile found.
	notes *part[[]string]
	// unrecordedChanged, when set, is told what unrecorded holds for a status object each time
	// that changes (nil: nothing), to keep it past a restart (UnrecordedStore).
	unrecordedChanged func(key types.NamespacedName, cluster string, records []holdfastv1.DriftRecord)
	// tellMu orders the calls of unrecordedChanged as the reads they carry: the last call for a
	// status object carries what it holds now.
	tellMu sync.Mutex
}

// recorded is the part of a status object a drift correction needs before it may read the
// whole object: its resourceVersion then, and the inventory entries not InSync (the state of an
// object decides what is done about its drift, e.g. a Contested one waits). The entries InSync,
// usually nearly all, are left out: they are what a correction assumes of an object it finds no
// entry for.
type recorded struct {
	resourceVersion string
	// replaced are the versions this process's own writes replaced, one after the other, up to
	// the version recorded (oldest first, at most maxReplaced): the cache may not have seen those
	// writes yet, and still hold one of them. A large status object takes a while to reach the
	// cache.
	replaced []string
	unusual  inventory.Index
}

// maxReplaced bounds recorded.replaced.
const maxReplaced = 16

// maxUnusual bounds the entries a recorded status keeps; a status object with more objects not
// InSync is read whole before each correction.
const maxUnusual = 1000

func newMemory() *memory {
	return &memory{
		drifts:     newPart[[]holdfastv1.DriftRecord](maxPendingStatuses),
		rechecks:   newPart[struct{}](maxPendingStatuses),
		unrecorded: newPart[[]holdfastv1.DriftRecord](maxPendingStatuses),
		compared:   newPart[time.Time](0),
		declared:   newDeclarationStore(maxDeclaredBytes),
		recorded:   newPart[*recorded](0),
		notes:      newPart[[]string](0),
	}
}

// addDrift remembers a drift a watch saw for the status object key of a Cluster, until its
// reconcile takes it. It reports false when the drift was dropped because too many status
// objects hold drifts already.
func (m *memory) addDrift(key types.NamespacedName, cluster string, rec holdfastv1.DriftRecord) bool {
	return m.drifts.change(key, cluster, false, func(drifts []holdfastv1.DriftRecord) ([]holdfastv1.DriftRecord, bool) {
		if drift.Superseded(nil, types.NamespacedName{}, rec, drifts) {
			return drifts, len(drifts) > 0 // a second watch's report of a change waiting already
		}
		return newestDrifts(append(drifts, rec)), true
	})
}

// newestDrifts keeps the newest MaxDriftRecords of drifts.
func newestDrifts(drifts []holdfastv1.DriftRecord) []holdfastv1.DriftRecord {
	if len(drifts) > holdfastv1.MaxDriftRecords {
		drifts = drifts[len(drifts)-holdfastv1.MaxDriftRecords:]
	}
	return drifts
}

// hasDrifts reports whether watches saw drifts of a status object that no reconcile took yet.
func (m *memory) hasDrifts(key types.NamespacedName) bool {
	_, ok := m.drifts.get(key)
	return ok
}

// takeDrifts returns and forgets the drifts seen for a status object.
func (m *memory) takeDrifts(key types.NamespacedName) []holdfastv1.DriftRecord {
	d, _ := m.drifts.take(key)
	return d
}

// returnDrifts puts back, before any seen since, drifts a reconcile took but could not record.
func (m *memory) returnDrifts(key types.NamespacedName, cluster string, drifts []holdfastv1.DriftRecord) {
	if len(drifts) == 0 {
		return
	}
	m.drifts.change(key, cluster, true, func(since []holdfastv1.DriftRecord) ([]holdfastv1.DriftRecord, bool) {
		return newestDrifts(append(append([]holdfastv1.DriftRecord{}, drifts...), since...)), true
	})
}

// keepUnrecorded keeps records (newest first) until a status patch writes them, before those
// kept already; over MaxDriftRecords the oldest are dropped, and counted.
func (m *memory) keepUnrecorded(key types.NamespacedName, cluster string, records []holdfastv1.DriftRecord) {
	if len(records) == 0 {
		return
	}
	m.unrecorded.change(key, cluster, true, func(kept []holdfastv1.DriftRecord) ([]holdfastv1.DriftRecord, bool) {
		all := append(append([]holdfastv1.DriftRecord{}, records...), kept...)
		if over := len(all) - holdfastv1.MaxDriftRecords; over > 0 {
			metrics.DriftRecordsDropped(over)
			all = all[:holdfastv1.MaxDriftRecords]
		}
		return all, true
	})
	m.tellUnrecorded(key, cluster)
}

// tellUnrecorded tells unrecordedChanged what unrecorded holds now for the status object key.
func (m *memory) tellUnrecorded(key types.NamespacedName, cluster string) {
	if m.unrecordedChanged == nil {
		return
	}
	m.tellMu.Lock()
	defer m.tellMu.Unlock()
	kept, _ := m.unrecorded.get(key)
	m.unrecordedChanged(key, cluster, slices.Clone(kept))
}

// unrecordedDrifts returns the records kept for the status object key, newest first.
func (m *memory) unrecordedDrifts(key types.NamespacedName) []holdfastv1.DriftRecord {
	kept, _ := m.unrecorded.get(key)
	return slices.Clone(kept)
}

// forgetUnrecorded forgets the records of written, which a status patch wrote.
func (m *memory) forgetUnrecorded(key types.NamespacedName, cluster string, written []holdfastv1.DriftRecord) {
	if len(written) == 0 {
		return
	}
	m.unrecorded.change(key, cluster, false, func(kept []holdfastv1.DriftRecord) ([]holdfastv1.DriftRecord, bool) {
		left := slices.DeleteFunc(slices.Clone(kept), func(d holdfastv1.DriftRecord) bool {
			return slices.ContainsFunc(written, func(w holdfastv1.DriftRecord) bool { return sameRecord(d, w) })
		})
		return left, len(left) > 0
	})
	m.tellUnrecorded(key, cluster)
}

// markRecheck makes the next reconcile of a status object compare with the cluster even if no
// full reconcile is due. It reports false when the mark was refused because too many status
// objects hold one already: that reconcile compares only if something else makes it.
func (m *memory) markRecheck(key types.NamespacedName, cluster string) bool {
	return m.rechecks.change(key, cluster, false, func(struct{}) (struct{}, bool) { return struct{}{}, true })
}

// hasRecheck reports, without taking it, whether a status object is marked for a recheck.
func (m *memory) hasRecheck(key types.NamespacedName) bool {
	_, ok := m.rechecks.get(key)
	return ok
}

// takeRecheck reports whether a recheck was asked for since the last call, and clears it.
func (m *memory) takeRecheck(key types.NamespacedName) bool {
	_, ok := m.rechecks.take(key)
	return ok
}

// setCompared records that this process compared a status object's objects with the cluster.
func (m *memory) setCompared(key types.NamespacedName, cluster string, at time.Time) {
	m.compared.put(key, cluster, at, !at.IsZero())
}

// lastCompared returns when this process last compared a status object's objects with the
// cluster, and false if it never did.
func (m *memory) lastCompared(key types.NamespacedName) (time.Time, bool) {
	return m.compared.get(key)
}

// setDeclarations replaces what the services of a status object declared, and drops the
// declarations used least recently while all of them hold more than the bound. Ones over the
// bound alone are not kept.
func (m *memory) setDeclarations(key types.NamespacedName, cluster string, declared map[string]*rendercache.Declaration) {
	m.declared.set(key, cluster, declared)
}

// declarations returns what the services of a status object declared at their last render, by
// service name; the map must not be changed.
func (m *memory) declarations(key types.NamespacedName) map[string]*rendercache.Declaration {
	return m.declared.get(key)
}

// declares reports whether service of the status object key declares ref at its last render
// (known), or nothing when memory does not hold that service's declaration (a restart, a
// service that did not render, a service label that names none).
func (m *memory) declares(key types.NamespacedName, service string, ref apply.Ref) (declared, known bool) {
	d := m.declared.get(key)[service]
	if d == nil {
		return false, false
	}
	return d.Declares(declaredKey(ref)), true
}

// setWatchNotes replaces what the status object's watches cover less than everywhere.
func (m *memory) setWatchNotes(key types.NamespacedName, cluster string, notes []string) {
	m.notes.put(key, cluster, notes, notes != nil)
}

// watchNotes returns what setWatchNotes was given last.
func (m *memory) watchNotes(key types.NamespacedName) []string {
	notes, _ := m.notes.get(key)
	return notes
}

// setRecorded remembers the whole status object css as read, or as written over version
// replaced; it forgets what was remembered when css holds too many objects not InSync.
func (m *memory) setRecorded(key types.NamespacedName, cluster string, css *holdfastv1.ClusterServiceStatus, replaced string) {
	rec := recordOf(css)
	m.recorded.change(key, cluster, true, func(prev *recorded) (*recorded, bool) {
		if rec == nil {
			return nil, false
		}
		if prev != nil {
			switch {
			case replaced != "" && replaced == prev.resourceVersion:
				// Written over what was recorded: the cache may hold any version of the chain.
				rec.replaced = append(append([]string{}, prev.replaced...), replaced)
			case replaced == "" && css.ResourceVersion == prev.resourceVersion:
				rec.replaced = prev.replaced // read back what was recorded
			}
		}
		if rec.replaced == nil && replaced != "" {
			rec.replaced = []string{replaced}
		}
		if len(rec.replaced) > maxReplaced {
			rec.replaced = rec.replaced[len(rec.replaced)-maxReplaced:]
		}
		return rec, true
	})
}

// recordOf is what is recorded of the whole status object css: nil when there is none or it
// holds too many objects not InSync.
func recordOf(css *holdfastv1.ClusterServiceStatus) *recorded {
	if css == nil {
		return nil
	}
	rec := &recorded{resourceVersion: css.ResourceVersion, unusual: inventory.Index{}}
	for _, rs := range css.Status.Resources {
		if rs.State == holdfastv1.ResourceInSync {
			continue
		}
		if len(rec.unusual) == maxUnusual {
			return nil
		}
		rec.unusual[drift.RefOf(rs.ResourceRef)] = rs
	}
	return rec
}

// recordedAt returns what was recorded of a status object if the version in the cache,
// resourceVersion, is the one recorded or one this process's own writes replaced on the way to
// it (the cache has not seen them yet), else nil: someone else changed the status object since.
func (m *memory) recordedAt(key types.NamespacedName, resourceVersion string) *recorded {
	if rec := m.lastRecorded(key); rec != nil && (rec.resourceVersion == resourceVersion || slices.Contains(rec.replaced, resourceVersion)) {
		return rec
	}
	return nil
}

// lastRecorded returns what was last recorded of a status object, whatever version the cache
// holds; nil if nothing is.
func (m *memory) lastRecorded(key types.NamespacedName) *recorded {
	rec, _ := m.recorded.get(key)
	return rec
}

// forget drops everything known about a status object that is gone.
func (m *memory) forget(key types.NamespacedName) {
	m.drifts.forget(key)
	m.rechecks.forget(key)
	m.unrecorded.forget(key)
	m.tellUnrecorded(key, "")
	m.compared.forget(key)
	m.declared.forget(key)
	m.recorded.forget(key)
	m.notes.forget(key)
}

// forgetUnrecordedOf forgets the records kept for the status objects of a Cluster that is gone,
// and returns those status objects.
func (m *memory) forgetUnrecordedOf(cluster types.NamespacedName) []types.NamespacedName {
	keys := m.unrecorded.forgetCluster(cluster)
	for _, key := range keys {
		m.tellUnrecorded(key, cluster.Name)
	}
	return keys
}

// forgetCluster drops everything known about the status objects of a Cluster that is gone, and
// returns them.
func (m *memory) forgetCluster(cluster types.NamespacedName) []types.NamespacedName {
	gone := map[types.NamespacedName]bool{}
	for _, keys := range [][]types.NamespacedName{
		m.drifts.forgetCluster(cluster), m.rechecks.forgetCluster(cluster), m.forgetUnrecordedOf(cluster), m.compared.forgetCluster(cluster),
		m.declared.forgetCluster(cluster), m.recorded.forgetCluster(cluster), m.notes.forgetCluster(cluster),
	} {
		for _, key := range keys {
			gone[key] = true
		}
	}
	return slices.Collect(maps.Keys(gone))
}

package clusterservicestatus

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
)

// maxPendingStatuses bounds how many status objects can hold drifts the watches saw and no
// reconcile has taken yet, and, apart, how many can hold a recheck mark (see waiting). Objects
// on a target carry their owner in an annotation anyone with write access there can set; the
// drift watches accept only owners whose status object exists for that cluster (onDrift), and
// the bound holds whatever the callers: a hostile cluster cannot make the controller remember
// things for any number of status objects. A drift dropped over the bound is not lost: a
// recheck mark makes its reconcile compare with the cluster and find it again (detection
// Comparison), and a status object refused both is compared at its next full reconcile.
const maxPendingStatuses = 10000

// waiting counts the entries that hold one kind of thing for their next reconcile, and admits
// new ones up to maxPendingStatuses: the one bound of what the drift watches and map functions,
// which run ahead of reconciles, can make memory hold.
type waiting struct{ n int }

// admits reports whether an entry may hold the thing counted, given whether it holds it already.
func (w *waiting) admits(holds bool) bool { return holds || w.n < maxPendingStatuses }

// update counts an entry that held the thing (had) and now holds it or not (has).
func (w *waiting) update(had, has bool) {
	switch {
	case !had && has:
		w.n++
	case had && !has:
		w.n--
	}
}

// maxDeclaredBytes bounds what the declarations of all status objects hold (declaration.size):
// about 128 MiB of compressed manifests, several GiB of YAML. Over it, the status objects whose
// declarations were used least recently lose them, as after a restart: their next full
// reconcile renders, their drift is corrected after a render, and changes to labelled objects
// they do not declare bring a reconcile rather than being told apart at once.
const maxDeclaredBytes = 128 << 20

// memory is what this process knows about status objects between their reconciles, kept apart
// from the API server because it is written from informer goroutines (the drift watches), map
// functions and reconciles at once: the drifts watches saw and no reconcile recorded yet, the
// status objects whose next reconcile must compare with the cluster, when this process last
// compared each with its cluster, and the corrections counted to notice fights.
//
// It lives in memory by design: a restart forgets it, and the first reconcile of each status
// object after a start compares with the cluster, which finds what was pending. It forgets a
// status object when the object is gone and every status object of a Cluster that is gone, and
// it holds pending drifts for at most maxPendingStatuses status objects, MaxDriftRecords each,
// and recheck marks for at most as many (drifts a reconcile took and puts back are never refused,
// which can go over the bound by the reconciles under way), and declarations up to
// maxDeclaredBytes. It is safe for concurrent use.
type memory struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]*remembered
	// pending counts the entries with drifts, rechecks those with a recheck mark.
	pending, rechecks waiting
	// fights counts recent corrections per object.
	fights *drift.Fights
	// used orders the status objects that hold declarations by their last use, each with the
	// bytes they hold; declaredBytes is their sum, at most maxDeclared. Its eviction function
	// drops an entry's declarations; it runs, like every call to used, with mu held.
	used                       *lru.Cache
	declaredBytes, maxDeclared int
}

// remembered is what memory holds about one status object.
type remembered struct {
	// cluster is the name of the status object's Cluster (in its namespace).
	cluster string
	// drifts are drifts watches saw since the last reconcile took them, oldest first.
	drifts []holdfastv1.DriftRecord
	// recheck: the next reconcile compares with the cluster even if nothing is due.
	recheck bool
	// compared is when this process last compared the objects with the cluster; zero if never.
	compared time.Time
	// declared is what each service declared at its last render, by service name.
	declared map[string]*declaration
	// recorded is what the status object held when this process last wrote or read it whole.
	recorded *recorded
	// watchNotes say what the cluster's watches of this status object's kinds cover less than
	// everywhere (watchInventory).
	watchNotes []string
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
	unusual  map[apply.Ref]holdfastv1.ResourceStatus
}

// maxReplaced bounds recorded.replaced.
const maxReplaced = 16

// maxUnusual bounds the entries a recorded status keeps; a status object with more objects not
// InSync is read whole before each correction.
const maxUnusual = 1000

func newMemory() *memory {
	m := &memory{entries: map[types.NamespacedName]*remembered{}, fights: &drift.Fights{}, maxDeclared: maxDeclaredBytes}
	m.used = lru.NewWithEvictionFunc(0, m.dropDeclarations)
	return m
}

// dropDeclarations is used's eviction function: the declarations of key are gone.
func (m *memory) dropDeclarations(key lru.Key, size any) {
	m.declaredBytes -= size.(int)
	name := key.(types.NamespacedName)
	if e := m.entries[name]; e != nil {
		e.declared = nil
		m.tidy(name, e)
	}
}

// entry returns the entry of key, made if needed; the caller holds mu.
func (m *memory) entry(key types.NamespacedName, cluster string) *remembered {
	e := m.entries[key]
	if e == nil {
		e = &remembered{cluster: cluster}
		m.entries[key] = e
	}
	return e
}

// tidy drops e, the entry of key, when it holds nothing; the caller holds mu.
func (m *memory) tidy(key types.NamespacedName, e *remembered) {
	if len(e.drifts) == 0 && !e.recheck && e.compared.IsZero() && e.declared == nil && e.recorded == nil && e.watchNotes == nil {
		delete(m.entries, key)
	}
}

// setDrifts replaces the drifts of e, keeping the newest MaxDriftRecords; the caller holds mu.
func (m *memory) setDrifts(e *remembered, drifts []holdfastv1.DriftRecord) {
	if len(drifts) > holdfastv1.MaxDriftRecords {
		drifts = drifts[len(drifts)-holdfastv1.MaxDriftRecords:]
	}
	m.pending.update(len(e.drifts) > 0, len(drifts) > 0)
	e.drifts = drifts
}

// setRecheck sets or clears the recheck mark of e; the caller holds mu.
func (m *memory) setRecheck(e *remembered, recheck bool) {
	m.rechecks.update(e.recheck, recheck)
	e.recheck = recheck
}

// addDrift remembers a drift a watch saw for the status object key of a Cluster, until its
// reconcile takes it. It reports false when the drift was dropped because too many status
// objects hold drifts already.
func (m *memory) addDrift(key types.NamespacedName, cluster string, rec holdfastv1.DriftRecord) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[key]; !m.pending.admits(e != nil && len(e.drifts) > 0) {
		return false
	}
	e := m.entry(key, cluster)
	if drift.Superseded(nil, types.NamespacedName{}, rec, e.drifts) {
		return true // a second watch's report of a change waiting already
	}
	m.setDrifts(e, append(e.drifts, rec))
	return true
}

// hasDrifts reports whether watches saw drifts of a status object that no reconcile took yet.
func (m *memory) hasDrifts(key types.NamespacedName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[key]
	return e != nil && len(e.drifts) > 0
}

// takeDrifts returns and forgets the drifts seen for a status object.
func (m *memory) takeDrifts(key types.NamespacedName) []holdfastv1.DriftRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[key]
	if e == nil {
		return nil
	}
	d := e.drifts
	m.setDrifts(e, nil)
	m.tidy(key, e)
	return d
}

// returnDrifts puts back, before any seen since, drifts a reconcile took but could not record.
func (m *memory) returnDrifts(key types.NamespacedName, cluster string, drifts []holdfastv1.DriftRecord) {
	if len(drifts) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entry(key, cluster)
	m.setDrifts(e, append(append([]holdfastv1.DriftRecord{}, drifts...), e.drifts...))
}

// markRecheck makes the next reconcile of a status object compare with the cluster even if no
// full reconcile is due. It reports false when the mark was refused because too many status
// objects hold one already: that reconcile compares only if something else makes it.
func (m *memory) markRecheck(key types.NamespacedName, cluster string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[key]; !m.rechecks.admits(e != nil && e.recheck) {
		return false
	}
	m.setRecheck(m.entry(key, cluster), true)
	return true
}

// takeRecheck reports whether a recheck was asked for since the last call, and clears it.
// hasRecheck reports, without taking it, whether a status object is marked for a recheck.
func (m *memory) hasRecheck(key types.NamespacedName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[key]
	return e != nil && e.recheck
}

func (m *memory) takeRecheck(key types.NamespacedName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[key]
	if e == nil {
		return false
	}
	was := e.recheck
	m.setRecheck(e, false)
	m.tidy(key, e)
	return was
}

// setCompared records that this process compared a status object's objects with the cluster.
func (m *memory) setCompared(key types.NamespacedName, cluster string, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entry(key, cluster).compared = at
}

// lastCompared returns when this process last compared a status object's objects with the
// cluster, and false if it never did.
func (m *memory) lastCompared(key types.NamespacedName) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[key]; e != nil && !e.compared.IsZero() {
		return e.compared, true
	}
	return time.Time{}, false
}

// setDeclarations replaces what the services of a status object declared, and drops the
// declarations used least recently while all of them hold more than maxDeclared bytes. Ones
// over the bound alone are not kept.
func (m *memory) setDeclarations(key types.NamespacedName, cluster string, declared map[string]*declaration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used.Remove(key)
	size := 0
	for _, d := range declared {
		size += d.size()
	}
	if len(declared) > 0 && size <= m.maxDeclared {
		m.entry(key, cluster).declared = declared
		m.used.Add(key, size)
		m.declaredBytes += size
	}
	for m.declaredBytes > m.maxDeclared && m.used.Len() > 0 {
		m.used.RemoveOldest()
	}
}

// declarations returns what the services of a status object declared at their last render, by
// service name; the map must not be changed.
func (m *memory) declarations(key types.NamespacedName) map[string]*declaration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[key]; e != nil && e.declared != nil {
		m.used.Get(key)
		return e.declared
	}
	return nil
}

// setWatchNotes replaces what the status object's watches cover less than everywhere.
func (m *memory) setWatchNotes(key types.NamespacedName, cluster string, notes []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entry(key, cluster)
	e.watchNotes = notes
	m.tidy(key, e)
}

// watchNotes returns what setWatchNotes was given last.
func (m *memory) watchNotes(key types.NamespacedName) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[key]; e != nil {
		return e.watchNotes
	}
	return nil
}

// declares reports whether service of the status object key declares ref at its last render
// (known), or nothing when memory does not hold that service's declaration (a restart, a
// service that did not render, a service label that names none).
func (m *memory) declares(key types.NamespacedName, service string, ref apply.Ref) (declared, known bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[key]
	if e == nil || e.declared[service] == nil {
		return false, false
	}
	m.used.Get(key)
	return e.declared[service].declares(ref), true
}

// setRecorded remembers the whole status object css as read, or as written over version
// replaced; it forgets what was remembered when css holds too many objects not InSync.
func (m *memory) setRecorded(key types.NamespacedName, cluster string, css *holdfastv1.ClusterServiceStatus, replaced string) {
	var rec *recorded
	if css != nil {
		rec = &recorded{resourceVersion: css.ResourceVersion, unusual: map[apply.Ref]holdfastv1.ResourceStatus{}}
		for _, rs := range css.Status.Resources {
			if rs.State == holdfastv1.ResourceInSync {
				continue
			}
			if len(rec.unusual) == maxUnusual {
				rec = nil
				break
			}
			rec.unusual[unversioned(toRef(rs.ResourceRef))] = rs
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entry(key, cluster)
	if prev := e.recorded; rec != nil && prev != nil {
		switch {
		case replaced != "" && replaced == prev.resourceVersion:
			// Written over what was recorded: the cache may hold any version of the chain.
			rec.replaced = append(append([]string{}, prev.replaced...), replaced)
		case replaced == "" && css.ResourceVersion == prev.resourceVersion:
			rec.replaced = prev.replaced // read back what was recorded
		}
	}
	if rec != nil && rec.replaced == nil && replaced != "" {
		rec.replaced = []string{replaced}
	}
	if rec != nil && len(rec.replaced) > maxReplaced {
		rec.replaced = rec.replaced[len(rec.replaced)-maxReplaced:]
	}
	e.recorded = rec
	m.tidy(key, e)
}

// recordedAt returns what was recorded of a status object if the version in the cache,
// resourceVersion, is the one recorded or one this process's own writes replaced on the way to
// it (the cache has not seen them yet), else nil: someone else changed the status object since.
func (m *memory) recordedAt(key types.NamespacedName, resourceVersion string) *recorded {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[key]
	if e == nil || e.recorded == nil {
		return nil
	}
	if rec := e.recorded; rec.resourceVersion == resourceVersion || slices.Contains(rec.replaced, resourceVersion) {
		return rec
	}
	return nil
}

// lastRecorded returns what was last recorded of a status object, whatever version the cache
// holds; nil if nothing is.
func (m *memory) lastRecorded(key types.NamespacedName) *recorded {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[key]; e != nil {
		return e.recorded
	}
	return nil
}

// forget drops everything known about a status object that is gone.
func (m *memory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.drop(key)
}

// forgetCluster drops everything known about the status objects of a Cluster that is gone.
func (m *memory) forgetCluster(cluster types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, e := range m.entries {
		if key.Namespace == cluster.Namespace && e.cluster == cluster.Name {
			m.drop(key)
		}
	}
}

// drop forgets key; the caller holds mu.
func (m *memory) drop(key types.NamespacedName) {
	m.used.Remove(key)
	if e := m.entries[key]; e != nil {
		m.setDrifts(e, nil)
		m.setRecheck(e, false)
		delete(m.entries, key)
	}
	m.fights.ForgetStatus(key)
}

// Package drift is Holdfast's drift domain: what counts as drift, how a drift is recorded,
// and what the policy says to do about it. The ClusterServiceStatus controller wires it to the
// clusters and writes status; the rules live here, as functions with table tests.
//
//   - decide.go: what counts as drift — one function, Decide, for the watch path (a changed
//     version against the one before), the apply path and the comparison after an outage or a
//     restart (the live object against the declaration). A deleted object always is; a change
//     is drift when a field Holdfast declared has another value that Holdfast did not set, and
//     no ignore rule covers it. API defaulting, status updates, resourceVersion churn and
//     fields other managers add are not drift. Exempt is the per-object opt-out.
//   - ownwrites.go: Holdfast's record of its own writes (OwnWrites), which tells a change held by
//     its field manager that Holdfast made from one someone else made under that name
//     (Verdict.Claimed, ResolveClaim).
//   - author.go: who made a change, from managedFields, and the attribution stamp's user where it
//     can be trusted (StampedUser, TrustStamp). fields.go: how a changed value is shown
//     (Secret data redacted, long values cut).
//   - reported.go: which drifts watches reported remain to be handled (KeepReported) and are new
//     (NewReported): one change, one record (Superseded). records.go: a verdict as status
//     records it (DetailOf, DetailFor) and the bounded history (Record).
//   - policy.go: a service's drift policy resolved from its service set (action, ignore rules,
//     opt-out, fight limits, problems to report). respond.go: what the policy does about one
//     drifted object (correct, report, contested). windows.go: correction windows. fights.go:
//     counting corrections to notice another manager reverting them.
//   - watch.go, compact.go, snapshot.go: the watches on target clusters, below; applied.go: which
//     objects they keep in full, and the bounds.
//
// The watches go through each cluster's cache, which selects only objects labelled
// holdfast.dev/managed-by, so the controller holds what it manages, not the cluster. That label
// is no boundary, though: anyone who may create an object on a target can set it, and the
// holdfast.dev/ annotations a snapshot keeps, at any size. So the caches keep a full snapshot only
// of the objects an inventory of the cluster holds (Applied: the ClusterServiceStatus controller
// registers each object before it applies it, and every inventory it reads or writes), and at
// most MaxSnapshotBytes of each; any other labelled object is a stub of its identity, at most
// MaxForeignObjects of them per cluster. A stub never hides a drift: an object Holdfast applied
// whose snapshot is a stub (over the bound, or listed before its status object registered it)
// makes its status objects compare with the cluster at its next version or deletion. The
// server-side-apply field-set model both the watches and package apply build on (owned fields,
// their digest, JSON pointers) is package fieldset.
//
// # Compact caches
//
// An informer's store would hold a whole copy of every managed object: spec, status and every
// manager's managedFields, so the controller's memory would grow with the size of what it
// manages. With a Compactor as the cache's transform it holds a Snapshot instead: the object's
// identity (apiVersion, kind, namespace, name, uid, resourceVersion, deletionTimestamp), its
// holdfast.dev/ labels and annotations, Holdfast's field set (the FieldsV1 of its apply entry,
// interned, so objects declared alike share one copy), one compact encoding per owned value, and
// the owned digest (fieldset.OwnedDigest, what the inventory records). A value is kept as its JSON
// when that is short, else as a hash and the start shown to users; a Secret's data only as a
// hash keyed per process, never in plain text. The strings are packed into one allocation: a
// ConfigMap's snapshot takes about 350 bytes, the Compactor's index of it included, against
// several kilobytes for the object.
//
// The change itself is computed in the transform, where the whole new object is at hand, and
// rides on the new snapshot to the update handler, which reports it. The alternative, keeping
// enough of every object to compute the change in the handler from two snapshots, would need
// the new values of the fields Holdfast lost: those live in the other managers' field sets,
// which would have to be kept too (for every object, whether it ever drifts or not), and the
// author is found from the new object's managedFields, which a snapshot does not keep. The
// transform has neither problem: it reads the new object's values at the paths the previous
// snapshot owned and its managedFields for the author, and hands both to Decide (the Snapshot is
// the Declared side), and keeps nothing of them.
//
// To compare, the Compactor keeps the latest snapshot of each object (the one the informer
// stores next, so no extra copy) in the order the watch delivers versions; the informer's store
// would lag behind its queue. A relist after a broken watch needs nothing special: the listed
// versions are compared with the last ones seen, and objects gone are reported by the informer
// as deletions (DeletedFinalStateUnknown) of their stored snapshots. A version seen before (a
// relist of an unchanged object, or an informer transforming an object twice) returns the stored
// snapshot, so a relist allocates nothing for what did not change.
package drift

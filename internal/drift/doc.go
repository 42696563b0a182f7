// Package drift watches what Holdfast manages on target clusters and says when a managed object
// needs another look. The watches go through each cluster's cache, which selects only objects
// labelled holdfast.dev/managed-by, so the controller holds what it manages, not the cluster.
// An update counts only when it changes the values of the fields Holdfast owns (its
// server-side-apply field set): API defaulting, status updates, resourceVersion churn and fields
// other managers add are not drift. A deleted object always is.
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
// snapshot owned and its managedFields for the author, exactly as Diff and AuthorOf do on whole
// objects, and keeps nothing of them.
//
// To compare, the Compactor keeps the latest snapshot of each object (the one the informer
// stores next, so no extra copy) in the order the watch delivers versions; the informer's store
// would lag behind its queue. A relist after a broken watch needs nothing special: the listed
// versions are compared with the last ones seen, and objects gone are reported by the informer
// as deletions (DeletedFinalStateUnknown) of their stored snapshots. A version seen before (a
// relist of an unchanged object, or an informer transforming an object twice) returns the stored
// snapshot, so a relist allocates nothing for what did not change.
//
// This is the first increment of drift handling: detection feeds the one apply path, which
// corrects. Field-level records, authors, Report mode, exclusions and fight detection build on it.
package drift

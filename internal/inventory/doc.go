// Package inventory keeps the inventory of a ClusterServiceStatus — one entry per object
// Holdfast manages for a service set on a cluster: its reference, service, state and the digests
// that let a reconcile skip unchanged objects and prune removed ones — where it fits.
//
// The API server refuses objects above 1.5 MiB, which a status object reaches at about 5,500
// entries. A small inventory (at most ShardSize entries, the common case) stays inline in
// status.resources, as it always was, so that `kubectl get -o yaml` and everything that reads
// status.resources keep working. A larger one moves to ClusterServiceInventory objects, the
// shards: status.inventory.names lists them, and status.resources keeps only a bounded summary,
// the entries not InSync (drifted, failed, conflicts…), at most MaxSummarizedResources, with the
// counts per state and the per-service summaries beside it as before.
//
// Layout (Layout, ShardOf). An entry's shard is the FNV-1a hash of its object's reference
// (group, kind, namespace, name; not the version, which changes without the object changing)
// modulo the number of shards, a power of two at least entries / ShardSize. Assignment is stable:
// a reconcile that changes one object's entry (a drift correction that changed its digests, a
// Failed object) rewrites the one shard holding it, and Save writes only the shards whose content
// changed. The number of shards doubles when the inventory outgrows it or a shard would exceed
// maxShardBytes, never shrinks while sharded (so entries do not move back and forth), and the
// inventory goes back inline once it has fallen to half of ShardSize (hysteresis).
//
// Consistency. Shards are written before the status patch that names them and stale shards
// deleted only after it succeeded, so a status object always names a complete set: a crash or a
// conflicting status patch leaves either the shards it names (rewritten, at worst newer than the
// status: what the cluster holds) or unnamed strays that the next successful write deletes.
// Shard names carry the number of shards, so a re-layout never overwrites the set the status
// object still names. A status object that names a shard that is missing, belongs to another
// status object or does not hold what it says is incomplete (IncompleteError): the controller
// then applies, prunes and withdraws nothing — an incomplete inventory would make it forget
// objects it must prune or withdraw — and says so in the Applied condition.
//
// Parts (LoadPart, SavePart). Recording a drift correction needs only the shards holding the
// entries it changed and the summary, which holds every entry not InSync when it omits none; the
// rest of the inventory is InSync and left as it is. SavePart refuses (ErrBeyondPart) entries that
// change anything else, and the caller reads the inventory whole.
//
// Shards are owned by their status object (ownerReference) for a garbage collector, labelled
// with its name (StatusLabel) so that one List reads them all, and read straight from the API
// server, never through an informer: the hub keeps no per-object state of a deployment.
package inventory

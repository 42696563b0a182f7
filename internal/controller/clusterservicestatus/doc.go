// Package clusterservicestatus holds the controller that deploys one MultiClusterService's
// services to one Cluster and records the outcome in their ClusterServiceStatus: it renders
// every service for that cluster (internal/render; a Helm service once per revision of its
// inputs, the rendering kept on the hub by internal/rendercache so that values its chart
// generates stay), applies the objects through the one apply path (internal/apply), prunes what
// is no longer declared, resolves conflicts with other MultiClusterServices by priority, and
// runs a full reconcile at least every reconcileInterval — measured from the time persisted in
// status, so a restart neither postpones nor repeats it — or at once when
// holdfast.dev/reconcile-requested-at changes.
//
// Everything it reads and writes on the cluster for a service set's objects goes through one
// client, chosen in one place (scope.targetClient, identity.go): the connection's own, or, when
// the service set names spec.serviceAccount, one that impersonates that ServiceAccount
// (fleet.Connection.ClientAs). Drift watches stay on the connection's own identity.
//
// The inventory (status.resources) is read whole and written back in one place,
// inventory_store.go: inline in the status object when small, in ClusterServiceInventory shards
// when too large for it (package inventory). The rest of the package sees the whole inventory in
// status.resources either way, and a missing shard stops everything but the status write. The
// recording of a drift correction reads only the shards holding the entries it changed
// (inventory_part.go), which the rest of the package sees as the inventory too, but for counts,
// health and the write.
//
// Each service is rendered once per revision of its inputs in this process. What the last
// render of each service declared is kept in memory, zstd-packed, with the digest of its inputs
// (rendercache.InputDigest: the one definition of what a render reads), as a declaration
// (rendercache.Declaration, kept per status object in memory.go). The same copy serves three
// ends: a drift correction takes the drifted
// objects' declarations from it, a watch event on an object no service declares is told apart
// with it, and a full reconcile whose service's inputs have the same digest applies it instead
// of rendering (renderService). The inputs themselves are still read at every reconcile, from
// the hub cache, Secrets from the API server and ConfigMaps from the API server once per
// version (templatesource.RecentConfigMaps; the cache holds their metadata only): that is how
// a change is seen. Helm services are
// the exception: their rendering is read back from the hub's Secret at each full reconcile,
// since another replica may have rendered them again meanwhile, and the Secret's copy is the
// one that stays. The declarations of all status objects together are bounded
// (maxDeclaredBytes, least recently used dropped first, memory.go); they hold Secret values and
// are never logged.
//
// When a status object is reconciled is package scheduling's: the controller's queue is its
// Queue, controller-runtime's priority queue wrapped to record when each status object became
// ready in it and what brought it (the controller's sources tag what they add with
// scheduling.Triggered), drifted status objects are queued first (scheduling.DriftPriority),
// and a routine reconcile takes one of scheduling.RoutineSlots before it starts, so that
// scheduling.DriftWorkers workers stay free for corrections.
package clusterservicestatus

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
// status.resources either way, and a missing shard stops everything but the status write.
package clusterservicestatus

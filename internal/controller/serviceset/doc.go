// Package serviceset holds the ServiceSet controller: it runs each ServiceSet, a tenant's
// namespaced service set, as a cluster-scoped MultiClusterService labelled with the ServiceSet's
// namespace (holdfastv1.TenantNamespaceLabel), which package tenancy then limits to that
// namespace wherever it is used — Clusters selected, templates rendered, Secrets read. A
// ServiceSet that names another namespace is refused as a whole (CrossNamespaceReference) and
// what runs for it stays as it was. The ServiceSet's status is its MultiClusterService's; deleting
// the ServiceSet deletes the MultiClusterService, which withdraws the services per its policy.
package serviceset

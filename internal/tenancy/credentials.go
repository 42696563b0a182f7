package tenancy

import "slices"

// AmbientCredentials reports whether Clusters of namespace ns may reach their targets with
// credentials of the controller's rather than their kubeconfig's own: exec credential plugins,
// which run on the controller with its environment and so mint tokens from its cloud identity
// (IRSA, Workload Identity, a managed identity). A Cluster that could use them would act on any
// cluster that identity reaches, as the controller, so only Clusters of platform namespaces may,
// and those of the namespaces the operator allows by name (allowed, the controller's
// --exec-plugin-namespaces): a tenant registers its Clusters with credentials of its own. No
// namespace (a kubeconfig of no Cluster) may not.
func (p Policy) AmbientCredentials(ns string, allowed []string) bool {
	return ns != "" && (p.platform(ns) || slices.Contains(allowed, ns))
}

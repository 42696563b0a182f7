package controller

import (
	"os"
	"strings"
)

// LocalNamespace is the controller's namespace when it runs outside a cluster (the sandbox, the
// demo, tests): where they register Clusters and the chart installs by default.
const LocalNamespace = "holdfast-system"

// ownNamespace returns the namespace the controller runs in: the pod's, from the downward API
// (POD_NAMESPACE, which the chart sets) or the service account's namespace file, else
// LocalNamespace. It is the default platform namespace (package tenancy).
func ownNamespace() string {
	if ns := strings.TrimSpace(os.Getenv("POD_NAMESPACE")); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(inClusterNamespace); err == nil {
		if ns := strings.TrimSpace(string(b)); ns != "" {
			return ns
		}
	}
	return LocalNamespace
}

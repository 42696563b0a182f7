package fleetview

import (
	"fmt"
	"io"
	"strings"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// -o name prints one name a line, kubectl's `resource.group/name` extended so that a line names
// one object on its own, whatever the namespace or the cluster:
//
//   - an object on the hub is `kind.group/NAME` when it is cluster-scoped
//     (multiclusterservice.holdfast.dev/apps) and `kind.group/NAMESPACE/NAME` when it is
//     namespaced (clusterservicestatus.holdfast.dev/fleet/apps.c1);
//   - an object on a target cluster is `CLUSTERNAMESPACE/CLUSTER/kind.group/NAMESPACE/NAME`,
//     always five fields: NAMESPACE is empty for a cluster-scoped object
//     (fleet/c1/clusterrole.rbac.authorization.k8s.io//view), so `IFS=/ read` splits every line
//     the same way.
//
// kind is lower case and the core group is left out, as kubectl prints them. No field can
// contain a slash (Kubernetes names and kinds cannot), and each name is printed once, in the
// order of the document.

// Named is a document that -o name can print.
type Named interface {
	Names() []string
}

// WriteNames prints the document's names, one a line; nothing when it has none.
func WriteNames(w io.Writer, doc Named) error {
	for _, n := range doc.Names() {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// Names of a FleetStatus are its ClusterServiceStatuses, one per (cluster, service set).
func (fs FleetStatus) Names() []string {
	var names distinct
	for _, r := range fs.Items {
		names.add(hubName(kindClusterServiceStatus, r.ClusterNamespace, r.StatusName))
	}
	return names.list
}

// Names of a DriftList are the objects on the target clusters; with --all, those of the
// corrected drifts too.
func (l DriftList) Names() []string {
	var names distinct
	for _, it := range l.Items {
		names.add(targetName(it.Location, it.Object))
	}
	return names.list
}

// Names of a DriftHistory are the objects of its records on the target clusters.
func (h DriftHistory) Names() []string {
	var names distinct
	for _, it := range h.Items {
		names.add(targetName(it.Location, it.Object))
	}
	return names.list
}

// Names of a CorrectionRequestList are the objects the request was written to.
func (l CorrectionRequestList) Names() []string {
	var names distinct
	for _, req := range l.Items {
		names.add(hubName(req.Target.Kind, req.Target.Namespace, req.Target.Name))
	}
	return names.list
}

// Names of a PauseRequestList are the service sets paused or resumed.
func (l PauseRequestList) Names() []string {
	var names distinct
	for _, res := range l.Items {
		names.add(hubName(kindMultiClusterService, "", res.ServiceSet))
	}
	return names.list
}

// Kinds on the hub that -o name prints.
const (
	kindClusterServiceStatus = "ClusterServiceStatus"
	kindMultiClusterService  = "MultiClusterService"
)

// hubName names a Holdfast object on the hub.
func hubName(kind, namespace, name string) string {
	resource := resourceName(holdfastv1.GroupVersion.Group, kind)
	if namespace == "" {
		return resource + "/" + name
	}
	return resource + "/" + namespace + "/" + name
}

// targetName names an object on a target cluster.
func targetName(l Location, o ObjectRef) string {
	return strings.Join([]string{l.ClusterNamespace, l.Cluster, resourceName(o.Group, o.Kind), o.Namespace, o.Name}, "/")
}

// resourceName is kubectl's `kind.group` of -o name: kind in lower case, no group for core.
func resourceName(group, kind string) string {
	if group == "" {
		return strings.ToLower(kind)
	}
	return strings.ToLower(kind) + "." + group
}

// distinct keeps names in the order they are added, each once.
type distinct struct {
	seen map[string]bool
	list []string
}

func (d *distinct) add(name string) {
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	if !d.seen[name] {
		d.seen[name] = true
		d.list = append(d.list, name)
	}
}

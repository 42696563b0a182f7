// Package tenancy decides what a service set may reach on a hub shared by teams: which Clusters
// it may select, from which namespaces it may read templates and notification Secrets, and on
// which other service sets its services may depend.
//
// A namespace is a tenant boundary. A ServiceSet (namespaced) runs as a MultiClusterService
// labelled with its namespace (holdfastv1.TenantNamespaceLabel); such a service set reaches only
// that namespace. Other MultiClusterServices belong to platform admins. A platform service set
// selects Clusters only in the platform namespaces (Policy.PlatformNamespaces: the controller's
// --platform-namespaces, by default the controller's own namespace and the Pull clusters'
// namespaces, holdfast-pull-*) and in namespaces it
// lists itself (clusterSelector.namespaces), and reads templates and Secrets only in platform
// namespaces: a tenant can neither register a Cluster that receives platform services by
// labelling it, nor change what a platform service set deploys by editing a template in its own
// namespace. This holds with default flags; only an operator who names AllNamespaces ("*")
// makes every namespace a platform one, for a hub with one team.
//
// The MultiClusterService controller selects with Selects, and the ClusterServiceStatus
// controller checks Selects, Template and Secret again before it deploys or notifies, and
// DependsOn before it lets a service wait for another set's,, so that a
// status object nobody's selection created deploys nothing.
package tenancy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// AllNamespaces, as the only platform namespace, makes every namespace a platform one: a hub
// with one team, whose Cluster creators are all platform admins (--platform-namespaces='*').
const AllNamespaces = "*"

// PullNamespaces matches the namespaces `holdfast cluster add --pull` creates, one per Pull
// cluster (its agent's boundary, package agentaccess): a platform namespace pattern by default.
// Only those who may create namespaces create them, as only platform admins name platform
// namespaces.
const PullNamespaces = PullNamespacePrefix + "*"

// PullNamespacePrefix starts the name of the namespace of a Pull cluster: holdfast-pull-<name>.
const PullNamespacePrefix = "holdfast-pull-"

// Policy is the operator's tenancy setting. Its zero value has no platform namespace: platform
// service sets select only Clusters of namespaces they list, and read no template.
type Policy struct {
	// PlatformNamespaces are the namespaces platform service sets select Clusters in and read
	// templates and Secrets from; AllNamespaces alone: every namespace (a hub with one team).
	// The controller names its own namespace when the operator names none (see Platform).
	PlatformNamespaces []string
	// TenantServiceAccount, when set, is the ServiceAccount every ServiceSet acts as on its
	// targets unless it names another one of its own namespace: <ServiceSet namespace>/<this>
	// (the controller's --tenant-service-account, as Flux's --default-service-account). A
	// ServiceSet may name only ServiceAccounts of a namespace named as its own, with this set
	// or not.
	TenantServiceAccount string
}

// PlatformNamespaces returns the platform namespaces the operator's --platform-namespaces
// value names: own (the controller's namespace) and the Pull clusters' (PullNamespaces) when it
// names none, every namespace for AllNamespaces, which must then stand alone. A name ending in
// "*" names the namespaces that start with the part before it.
func PlatformNamespaces(flag []string, own string) ([]string, error) {
	var names []string
	for _, ns := range flag {
		if ns = strings.TrimSpace(ns); ns != "" {
			names = append(names, ns)
		}
	}
	switch {
	case len(names) == 0:
		if own == "" {
			return nil, errors.New("no platform namespace: name them with --platform-namespaces, or '*' for every namespace")
		}
		return []string{own, PullNamespaces}, nil
	case slices.Contains(names, AllNamespaces) && len(names) > 1:
		return nil, fmt.Errorf("--platform-namespaces %q: '*' (every namespace) stands alone", strings.Join(names, ","))
	}
	return names, nil
}

// Shared reports whether the hub is shared with tenants: not every namespace is a platform one.
func (p Policy) Shared() bool { return !slices.Contains(p.PlatformNamespaces, AllNamespaces) }

// TenantOf returns the namespace a service set is limited to, or "" for a platform service set.
func TenantOf(mcs *holdfastv1.MultiClusterService) string {
	return mcs.Labels[holdfastv1.TenantNamespaceLabel]
}

// platform reports whether ns is a platform namespace: named, or matching a name that ends in
// "*" by the part before it.
func (p Policy) platform(ns string) bool {
	if !p.Shared() {
		return true
	}
	for _, n := range p.PlatformNamespaces {
		if prefix, ok := strings.CutSuffix(n, "*"); n == ns || (ok && strings.HasPrefix(ns, prefix)) {
			return true
		}
	}
	return false
}

// AdmitsNamespace reports whether the service set may select Clusters in namespace ns: a
// tenant's only in its own; a platform one in the namespaces it lists, if it lists any, else in
// the platform namespaces.
func (p Policy) AdmitsNamespace(mcs *holdfastv1.MultiClusterService, ns string) bool {
	return p.admits(mcs, mcs.Spec.ClusterSelector.Namespaces, ns)
}

// admits is AdmitsNamespace for a cluster selector listing namespaces listed.
func (p Policy) admits(mcs *holdfastv1.MultiClusterService, listed []string, ns string) bool {
	if t := TenantOf(mcs); t != "" {
		return ns == t
	}
	if len(listed) > 0 {
		return slices.Contains(listed, ns)
	}
	return p.platform(ns)
}

// Selects reports whether the service set selects the Cluster: its namespace is admitted and
// selector (the service set's label selector, parsed) matches its labels.
func (p Policy) Selects(mcs *holdfastv1.MultiClusterService, selector labels.Selector, c *holdfastv1.Cluster) bool {
	return p.SelectsBy(mcs, mcs.Spec.ClusterSelector.Namespaces, selector, c)
}

// SelectsBy is Selects for another cluster selector of the service set than its spec's (the one
// in force while a changed one waits for approval): namespaces it lists and selector, parsed.
func (p Policy) SelectsBy(mcs *holdfastv1.MultiClusterService, namespaces []string, selector labels.Selector, c *holdfastv1.Cluster) bool {
	return p.admits(mcs, namespaces, c.Namespace) && selector.Matches(labels.Set(c.Labels))
}

// Template returns an error naming what to fix when the service set may not use a template of
// namespace ns: a tenant's only its own namespace's, a platform one only a platform namespace's.
func (p Policy) Template(mcs *holdfastv1.MultiClusterService, service, ns string) error {
	return p.reads(mcs, ns, fmt.Sprintf("service %q: template namespace %q", service, ns))
}

// Secret returns an error naming what to fix when the service set may not read a notification
// Secret of namespace ns, on the same rule as Template.
func (p Policy) Secret(mcs *holdfastv1.MultiClusterService, target, ns string) error {
	return p.reads(mcs, ns, fmt.Sprintf("notification %q: Secret namespace %q", target, ns))
}

func (p Policy) reads(mcs *holdfastv1.MultiClusterService, ns, what string) error {
	if t := TenantOf(mcs); t != "" {
		if ns != t {
			return fmt.Errorf("%s is outside the ServiceSet's namespace %q: a ServiceSet uses only objects of its own namespace", what, t)
		}
		return nil
	}
	if !p.platform(ns) {
		return fmt.Errorf("%s is not a platform namespace (%v): a MultiClusterService uses only templates and Secrets of platform namespaces, which tenants cannot change", what, p.PlatformNamespaces)
	}
	return nil
}

// DependsOn returns an error naming what to fix when a service of mcs may not depend on a
// service of other (spec.services[].dependsOn "<multiclusterservice>/<service>"): a tenant's
// service set only on service sets of the same tenant, whose specs that tenant writes; on a hub
// shared with tenants, a platform service set only on platform ones, so that no tenant can hold
// back, or release, what platform service sets deploy.
func (p Policy) DependsOn(mcs, other *holdfastv1.MultiClusterService) error {
	mine, theirs := TenantOf(mcs), TenantOf(other)
	switch {
	case mine != "" && theirs != mine:
		return fmt.Errorf("dependsOn names MultiClusterService %s, which is not a ServiceSet of namespace %q: a ServiceSet depends only on ServiceSets of its own namespace", other.Name, mine)
	case mine == "" && theirs != "" && p.Shared():
		return fmt.Errorf("dependsOn names MultiClusterService %s, the ServiceSet of namespace %q: a MultiClusterService depends only on platform service sets, which tenants cannot change", other.Name, theirs)
	}
	return nil
}

// ServiceSet returns an error naming every reference of a ServiceSet outside its own namespace,
// its serviceAccount's included: such a ServiceSet is refused as a whole.
func (p Policy) ServiceSet(ss *holdfastv1.ServiceSet) error {
	var errs []error
	if sa := ss.Spec.ServiceAccount; sa != nil && sa.Namespace != ss.Namespace {
		errs = append(errs, fmt.Errorf("serviceAccount names namespace %q: a ServiceSet acts on its targets only as a ServiceAccount of a namespace named as its own, %q (set serviceAccount.namespace to %q)", sa.Namespace, ss.Namespace, ss.Namespace))
	}
	for _, ns := range ss.Spec.ClusterSelector.Namespaces {
		if ns != ss.Namespace {
			errs = append(errs, fmt.Errorf("clusterSelector.namespaces names %q: a ServiceSet selects Clusters only in its own namespace %q", ns, ss.Namespace))
		}
	}
	as := &holdfastv1.MultiClusterService{}
	as.Labels = map[string]string{holdfastv1.TenantNamespaceLabel: ss.Namespace}
	for _, svc := range ss.Spec.Services {
		if err := p.Template(as, svc.Name, svc.Template.Namespace); err != nil {
			errs = append(errs, err)
		}
	}
	for _, n := range ss.Spec.Notifications {
		if err := p.Secret(as, n.Name, n.SecretRef.Namespace); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ServiceAccount returns who a ServiceSet acts as on its targets: the ServiceAccount it names,
// else TenantServiceAccount in a namespace named as the ServiceSet's, else nil (Holdfast's own
// identity, that is the rights of the kubeconfig its Cluster was registered with).
func (p Policy) ServiceAccount(ss *holdfastv1.ServiceSet) *holdfastv1.ServiceAccountReference {
	switch {
	case ss.Spec.ServiceAccount != nil:
		return ss.Spec.ServiceAccount.DeepCopy()
	case p.TenantServiceAccount != "":
		return &holdfastv1.ServiceAccountReference{Namespace: ss.Namespace, Name: p.TenantServiceAccount}
	}
	return nil
}

// AlertRuleSees reports whether an AlertRule in namespace ns may be told of the service set's
// events: a rule in a platform namespace of every service set's, a rule in a tenant's namespace
// only of that tenant's ServiceSets'.
func (p Policy) AlertRuleSees(ns string, mcs *holdfastv1.MultiClusterService) bool {
	return p.platform(ns) || TenantOf(mcs) == ns
}

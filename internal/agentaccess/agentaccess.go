// Package agentaccess is what the agent of a Pull cluster may do on the hub, decided in one
// place: the ServiceAccount it authenticates as, the Role that limits it to its Cluster's
// namespace, the RoleBinding between them, the bootstrap Secret its first token is bound to and
// the Lease it reports through. The Cluster controller keeps these objects; `holdfast cluster
// add --pull` and `revoke`, and the agent, find them by the names here.
//
// The namespace is the boundary (docs/agent.md): RBAC cannot filter reads by field or label, so
// a Pull Cluster is alone in its namespace, and everything its agent reads or writes is there.
package agentaccess

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Names of the agent's objects in its Cluster's namespace.
const (
	// ServiceAccountName is the agent's identity on the hub. Deleting it (holdfast cluster
	// revoke) ends every token issued for it at once; the Cluster controller creates a new one.
	ServiceAccountName = "holdfast-agent"
	// RoleName names the Role and the RoleBinding.
	RoleName = "holdfast-agent"
	// BootstrapSecretName is the Secret the bootstrap token is bound to: the agent deletes it
	// once it has a token of its own, which ends the bootstrap token.
	BootstrapSecretName = "holdfast-agent-bootstrap"
	// LeaseName is the agent's heartbeat.
	LeaseName = "holdfast-agent"
	// Label marks the objects above, with the Cluster's name as value; the hub's cache keeps
	// only ServiceAccounts, Roles, RoleBindings and Leases that carry it.
	Label = "holdfast.dev/agent-of"
	// Finalizer holds a Pull Cluster until its agent's access is gone.
	Finalizer = "holdfast.dev/agent-access"
)

// The controller keeps the agent's identity and Role in every Pull namespace, and reads its
// Lease. RBAC refuses to grant more than the granter has: what the agent may do that the
// controller may not do everywhere (its Lease, its tokens, its bootstrap Secret), and the
// controller's publishing of works, the controller may do only in the namespaces where an admin
// granted it the publisher Role (PublisherObjects; `holdfast cluster add --pull` does).
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch

// Rules are the agent's rights in its Cluster's namespace: read its status objects and write
// their status (and their inventory shards), read the declarations published for it (Secrets),
// end its bootstrap token, report through its Lease, mint tokens for itself, and emit Events.
func Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{holdfastv1.GroupVersion.Group}, Resources: []string{"clusterservicestatuses"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{holdfastv1.GroupVersion.Group}, Resources: []string{"clusterservicestatuses/status"}, Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{holdfastv1.GroupVersion.Group}, Resources: []string{"clusterserviceinventories"}, Verbs: []string{"get", "list", "create", "update", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"delete"}, ResourceNames: []string{BootstrapSecretName}},
		{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"get", "update"}, ResourceNames: []string{LeaseName}},
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}, ResourceNames: []string{ServiceAccountName}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
}

// Objects are the ServiceAccount, Role and RoleBinding of c's agent, owned by c.
func Objects(c *holdfastv1.Cluster) (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding) {
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: map[string]string{Label: c.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: holdfastv1.GroupVersion.String(), Kind: "Cluster",
				Name: c.Name, UID: c.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}}
	}
	sa := &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta(ServiceAccountName)}
	role := &rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
		ObjectMeta: meta(RoleName), Rules: Rules()}
	binding := &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: meta(RoleName),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: RoleName},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccountName, Namespace: c.Namespace}}}
	return sa, role, binding
}

// PublisherName names the Role and RoleBinding that let the controller publish a Pull
// cluster's work (Secrets) in its namespace. The controller may write Secrets only in its own
// namespace otherwise; `holdfast cluster add --pull`, run by an admin, grants this one.
const PublisherName = "holdfast-publisher"

// PublisherRules are the controller's rights in a Pull cluster's namespace beyond its own: to
// publish works (Secrets), and to hold what it grants the agent there and may not do elsewhere.
func PublisherRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "delete", "get", "list", "watch"}},
		{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"create", "get", "update", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}, ResourceNames: []string{ServiceAccountName}},
	}
}

// PublisherObjects are the Role and RoleBinding that give the controller, as the ServiceAccount
// controller, PublisherRules in namespace.
func PublisherObjects(namespace string, controller types.NamespacedName) (*rbacv1.Role, *rbacv1.RoleBinding) {
	meta := metav1.ObjectMeta{Name: PublisherName, Namespace: namespace}
	role := &rbacv1.Role{ObjectMeta: meta, Rules: PublisherRules()}
	binding := &rbacv1.RoleBinding{ObjectMeta: meta,
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: PublisherName},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: controller.Namespace, Name: controller.Name}}}
	return role, binding
}

// Username is the name the hub's API server knows the agent of a Cluster in namespace by.
func Username(namespace string) string {
	return "system:serviceaccount:" + namespace + ":" + ServiceAccountName
}

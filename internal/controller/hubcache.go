package controller

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/agentaccess"
	"holdfast.dev/holdfast/internal/controller/clusterservicestatus"
)

// hubCacheByObject says what the hub's cache keeps of the kinds it must not keep whole (every
// other kind loses only its managed fields):
//   - status objects, without their per-object lists: the hub keeps nothing per managed object
//     (see clusterservicestatus.CacheTransform);
//   - ConfigMaps and Secrets, which anyone may create in any namespace and which the controllers
//     watch only to hear that one changed, reduced to identityOnly, whether the informer is
//     metadata-only (as the watches are) or typed (should anything read them through the
//     cache): a tenant's ConfigMaps would otherwise fill the controller's memory, and
//     annotations carry data (kubectl's last-applied-configuration holds a Secret's). What the
//     controllers use of them they read from the API server (package templatesource, the
//     Cluster controller's kubeconfigs).
//   - ServiceAccounts, Roles, RoleBindings and Leases, only those of Pull clusters' agents
//     (package agentaccess): the hub's own (node Leases renewed every 10 s among them) are none
//     of the controllers' business.
func hubCacheByObject() map[client.Object]cache.ByObject {
	agents := labels.SelectorFromSet(nil).Add(agentLabel)
	return map[client.Object]cache.ByObject{
		&holdfastv1.ClusterServiceStatus{}: {Transform: clusterservicestatus.CacheTransform},
		&corev1.ConfigMap{}:                {Transform: identityOnly},
		&corev1.Secret{}:                   {Transform: identityOnly},
		&corev1.ServiceAccount{}:           {Label: agents},
		&rbacv1.Role{}:                     {Label: agents},
		&rbacv1.RoleBinding{}:              {Label: agents},
		&coordinationv1.Lease{}:            {Label: agents},
	}
}

// agentLabel selects the objects that carry agentaccess.Label.
var agentLabel = func() labels.Requirement {
	r, err := labels.NewRequirement(agentaccess.Label, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return *r
}()

// identityOnly reduces a Secret or ConfigMap, or its metadata, to what the watches of them use:
// its name and namespace (to map it to the objects reading it), UID and resourceVersion (to tell
// a new version: the Cluster controller's kubeconfig origin, templatesource's memory of
// ConfigMaps), and its creation and deletion times. Labels, annotations, owners, managed fields,
// data and type go.
func identityOnly(obj any) (any, error) {
	switch o := obj.(type) {
	case *metav1.PartialObjectMetadata:
		o.ObjectMeta = identity(o.ObjectMeta)
	case *corev1.ConfigMap:
		*o = corev1.ConfigMap{TypeMeta: o.TypeMeta, ObjectMeta: identity(o.ObjectMeta)}
	case *corev1.Secret:
		*o = corev1.Secret{TypeMeta: o.TypeMeta, ObjectMeta: identity(o.ObjectMeta)}
	}
	return obj, nil
}

func identity(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
	}
}

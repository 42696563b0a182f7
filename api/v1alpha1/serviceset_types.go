package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TenantNamespaceLabel on a MultiClusterService marks it as the one Holdfast runs for a
// ServiceSet, and names the ServiceSet's namespace: such a MultiClusterService selects Clusters
// and reads templates and notification Secrets only in that namespace (package tenancy).
// ServiceSetLabel names the ServiceSet (hashed when too long, as OwnerLabel).
const (
	TenantNamespaceLabel = "holdfast.dev/tenant-namespace"
	ServiceSetLabel      = "holdfast.dev/serviceset"
)

// ServiceSetStatus is the status of the MultiClusterService Holdfast runs for the ServiceSet.
type ServiceSetStatus struct {
	MultiClusterServiceStatus `json:",inline"`
	// MultiClusterService names the cluster-scoped MultiClusterService Holdfast runs for this
	// ServiceSet; its ClusterServiceStatus objects, in this namespace, hold the details.
	// +optional
	MultiClusterService string `json:"multiClusterService,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories=holdfast,shortName=hfss
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Matching",type=integer,JSONPath=`.status.matchingClusters`
// +kubebuilder:printcolumn:name="Ready Clusters",type=integer,JSONPath=`.status.readyClusters`
// +kubebuilder:printcolumn:name="Drifted",type=integer,JSONPath=`.status.driftedClusters`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.syncMode`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ServiceSet is a tenant's MultiClusterService: it lives in a namespace and deploys only to the
// Clusters registered in that namespace, only templates of that namespace, and notifies only
// through Secrets of that namespace. A ServiceSet that names anything in another namespace is
// refused (Ready False, reason CrossNamespaceReference) and changes nothing. Holdfast runs it as
// a cluster-scoped MultiClusterService it owns (status.multiClusterService), whose status it
// copies here; the per-cluster ClusterServiceStatus objects are in this namespace.
// holdfast.dev/reconcile-requested-at on a ServiceSet asks for a correction as on a
// MultiClusterService.
type ServiceSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is as a MultiClusterService's. clusterSelector.namespaces may name only this
	// namespace; services[].template.namespace and notifications[].secretRef.namespace must be
	// this namespace.
	Spec   MultiClusterServiceSpec `json:"spec,omitempty"`
	Status ServiceSetStatus        `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ServiceSetList is a list of ServiceSets.
type ServiceSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServiceSet `json:"items"`
}

// GetConditions returns the ServiceSet's conditions.
func (s *ServiceSet) GetConditions() []metav1.Condition { return s.Status.Conditions }

// SetConditions replaces the ServiceSet's conditions.
func (s *ServiceSet) SetConditions(c []metav1.Condition) { s.Status.Conditions = c }

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterSpec declares how Holdfast reaches a managed cluster.
// +kubebuilder:validation:XValidation:rule="(has(self.mode) && self.mode == 'Pull') != has(self.kubeconfigSecretRef)",message="a Push cluster needs kubeconfigSecretRef, and a Pull cluster has none: its agent connects to the hub"
type ClusterSpec struct {
	// Mode is how Holdfast reaches the cluster. Push (the default): the hub connects to the
	// cluster's API server with the kubeconfig of kubeconfigSecretRef and does the work itself.
	// Pull: the hub holds no kubeconfig; a Holdfast agent running in the cluster connects out to
	// the hub with an identity limited to this Cluster's namespace (`holdfast cluster add
	// --pull` prints what to apply on the cluster), and does the cluster's half of the work.
	// A Pull cluster is alone in its namespace.
	// +kubebuilder:validation:Enum=Push;Pull
	// +kubebuilder:default=Push
	// +optional
	Mode ClusterMode `json:"mode,omitempty"`

	// KubeconfigSecretRef names the Secret, in the Cluster's namespace, that holds the kubeconfig
	// Holdfast uses to reach the cluster. The kubeconfig must embed its certificates and tokens:
	// file references and exec or auth-provider plugins are refused. Required in Push mode;
	// refused in Pull mode.
	// +optional
	KubeconfigSecretRef SecretKeyReference `json:"kubeconfigSecretRef,omitzero"`

	// Paused stops Holdfast from connecting to the cluster and from changing anything in it.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// ClusterMode is how Holdfast reaches a cluster: Push or Pull.
type ClusterMode string

const (
	// ClusterModePush: the hub connects to the cluster with a kubeconfig.
	ClusterModePush ClusterMode = "Push"
	// ClusterModePull: an agent in the cluster connects to the hub.
	ClusterModePull ClusterMode = "Pull"
)

// Pull reports whether the Cluster is reached through an agent in it (spec.mode Pull).
func (c *Cluster) Pull() bool { return c.Spec.Mode == ClusterModePull }

// ClusterInitializationStatus reports milestones that, once reached, are never undone.
type ClusterInitializationStatus struct {
	// Provisioned is true once Holdfast connected to the cluster for the first time.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// ClusterStatus is the observed state of a Cluster.
type ClusterStatus struct {
	// Conditions: Ready summarises Connected and Paused.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ObservedGeneration is the generation of the spec the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Initialization reports one-way milestones of the cluster's lifecycle.
	// +optional
	Initialization *ClusterInitializationStatus `json:"initialization,omitempty"`

	// Version is the Kubernetes version the cluster's API server reported at the last successful probe.
	// +optional
	Version string `json:"version,omitempty"`

	// User is the identity the kubeconfig authenticates as, as reported by the cluster.
	// +optional
	User string `json:"user,omitempty"`

	// ClusterID identifies the cluster the kubeconfig reaches, whatever its address: the UID
	// of its kube-system namespace. Two Clusters with the same ClusterID are one cluster
	// registered twice (see the DuplicateRegistration condition). Empty while unknown.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ClusterID string `json:"clusterID,omitempty"`

	// LastProbeTime is when Holdfast last probed the cluster, successfully or not.
	// +optional
	LastProbeTime *metav1.Time `json:"lastProbeTime,omitempty"`

	// LastConnectedTime is when a probe of the cluster last succeeded. A probe failure within the
	// connection grace period after it keeps the cluster Connected.
	// +optional
	LastConnectedTime *metav1.Time `json:"lastConnectedTime,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=holdfastclusters,singular=holdfastcluster,categories=holdfast,shortName=hfc
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="Paused",type=boolean,JSONPath=`.spec.paused`,priority=1
// +kubebuilder:printcolumn:name="Last Probe",type=date,JSONPath=`.status.lastProbeTime`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Cluster is a Kubernetes cluster Holdfast manages, reached through a kubeconfig Secret (Push)
// or through a Holdfast agent running in it (Pull).
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterSpec   `json:"spec,omitempty"`
	Status ClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterList is a list of Clusters.
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

// GetConditions returns the Cluster's conditions.
func (c *Cluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces the Cluster's conditions.
func (c *Cluster) SetConditions(conditions []metav1.Condition) { c.Status.Conditions = conditions }

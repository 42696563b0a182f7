package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxSummarizedResources bounds status.resources of a ClusterServiceStatus whose inventory is
// kept in ClusterServiceInventory shards: it then lists only entries not InSync, at most this
// many.
const MaxSummarizedResources = 100

// MaxInventoryShards bounds the shards of one ClusterServiceStatus (InventoryShards.Names).
const MaxInventoryShards = 1024

// InventoryShards says where the inventory of a ClusterServiceStatus is kept when it is too
// large for the status object itself.
type InventoryShards struct {
	// Names are the ClusterServiceInventory objects, in the status object's namespace, that
	// hold every entry of the inventory; an object's entry is in the shard its reference hashes
	// to (see package inventory). Holdfast reads them all before it prunes or withdraws
	// anything, and stops, saying so in the Applied condition, when one is missing.
	// +kubebuilder:validation:MaxItems=1024
	// +listType=atomic
	Names []string `json:"names"`
	// Omitted is how many entries not InSync status.resources leaves out (it lists at most
	// MaxSummarizedResources); the shards hold them.
	// +optional
	Omitted int32 `json:"omitted,omitempty"`
}

// ClusterServiceInventorySpec is one shard of a ClusterServiceStatus's inventory. Holdfast
// writes it; nobody else should.
type ClusterServiceInventorySpec struct {
	// ClusterServiceStatus names the status object, in this namespace, whose inventory this is.
	ClusterServiceStatus string `json:"clusterServiceStatus"`
	// Shard is the number of this shard, from 0, among Shards.
	// +kubebuilder:validation:Minimum=0
	Shard int32 `json:"shard"`
	// Shards is how many shards the inventory is split into.
	// +kubebuilder:validation:Minimum=1
	Shards int32 `json:"shards"`
	// Count is the number of entries in Resources.
	// +optional
	Count int32 `json:"count"`
	// Resources are the inventory entries of the objects whose reference hashes to this shard.
	// +listType=atomic
	// +optional
	Resources []ResourceStatus `json:"resources,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=holdfast,shortName=hfinv
// +kubebuilder:printcolumn:name="Status Object",type=string,JSONPath=`.spec.clusterServiceStatus`
// +kubebuilder:printcolumn:name="Shard",type=integer,JSONPath=`.spec.shard`
// +kubebuilder:printcolumn:name="Shards",type=integer,JSONPath=`.spec.shards`
// +kubebuilder:printcolumn:name="Objects",type=integer,JSONPath=`.spec.count`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterServiceInventory holds one shard of the inventory of a ClusterServiceStatus whose
// inventory is too large for the status object (an API server refuses objects above 1.5 MiB:
// about 5,500 entries). The status object owns it (ownerReference), so a garbage collector
// removes it with the status object; Holdfast also deletes it when it withdraws the services.
type ClusterServiceInventory struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterServiceInventorySpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterServiceInventoryList is a list of ClusterServiceInventories.
type ClusterServiceInventoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterServiceInventory `json:"items"`
}

package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SyncMode says how Holdfast keeps a cluster in line with the declaration.
// +kubebuilder:validation:Enum=OneTime;Continuous;ContinuousWithDriftDetection;DryRun
type SyncMode string

const (
	// SyncModeOneTime deploys each service once to each cluster and never touches it again.
	SyncModeOneTime SyncMode = "OneTime"
	// SyncModeContinuous re-applies when the declaration changes and at every full reconcile.
	SyncModeContinuous SyncMode = "Continuous"
	// SyncModeContinuousWithDriftDetection also watches the cluster and handles drift.
	SyncModeContinuousWithDriftDetection SyncMode = "ContinuousWithDriftDetection"
	// SyncModeDryRun reports what would change and changes nothing.
	SyncModeDryRun SyncMode = "DryRun"
)

// UnmatchPolicy says what happens to a cluster's services when it stops matching the selector.
// +kubebuilder:validation:Enum=Withdraw;Leave
type UnmatchPolicy string

const (
	// UnmatchWithdraw deletes what was deployed to the cluster.
	UnmatchWithdraw UnmatchPolicy = "Withdraw"
	// UnmatchLeave leaves the objects in place, no longer managed.
	UnmatchLeave UnmatchPolicy = "Leave"
)

// DeletionPolicy says what happens to deployed objects when the MultiClusterService is deleted.
// +kubebuilder:validation:Enum=Delete;Orphan
type DeletionPolicy string

const (
	// DeletionDelete removes everything the MultiClusterService deployed.
	DeletionDelete DeletionPolicy = "Delete"
	// DeletionOrphan leaves the objects in place, no longer managed.
	DeletionOrphan DeletionPolicy = "Orphan"
)

// AdoptionPolicy says what happens to a declared object that already exists on a target and
// that Holdfast did not create: it lacks Holdfast's managed-by label or owner annotation, or
// another service set adopted it (AdoptedAnnotation). Objects in the inventory are Holdfast's.
// +kubebuilder:validation:Enum=Never;Adopt
type AdoptionPolicy string

const (
	// AdoptionNever leaves such an object untouched: its status entry is Conflict, naming it,
	// until someone deletes it on the cluster (Holdfast then creates its own) or sets Adopt.
	AdoptionNever AdoptionPolicy = "Never"
	// AdoptionAdopt takes such an object over (Holdfast applies its fields and labels) and
	// records it as adopted (status.resources[].adopted). An adopted object is never deleted:
	// pruning, withdrawal and deletion of the service set leave it in place, without Holdfast's
	// labels and annotations.
	AdoptionAdopt AdoptionPolicy = "Adopt"
)

// AdoptedAnnotation ("true") marks an object on a target that Holdfast adopted rather than
// created, so that no service set takes it for Holdfast's own: another one must adopt it too.
// Holdfast removes it, with its labels, when it lets the object go.
const AdoptedAnnotation = "holdfast.dev/adopted"

// DefaultReconcileInterval is the longest time between two full reconciles of a cluster's
// services when nothing asks for one sooner.
const DefaultReconcileInterval = 10 * time.Hour

// ClusterSelector selects Clusters by label and, optionally, namespace.
type ClusterSelector struct {
	metav1.LabelSelector `json:",inline"`
	// Namespaces limits the selection to Clusters in these namespaces; empty means all.
	// +kubebuilder:validation:MaxItems=256
	// +listType=set
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
}

// TemplateReference names a ServiceTemplate.
type TemplateReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
}

// ServiceAccountReference names a ServiceAccount on every target cluster.
type ServiceAccountReference struct {
	// Namespace of the ServiceAccount on the target cluster.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace"`
	// Name of the ServiceAccount.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
}

// Service is one template deployed to every selected cluster.
type Service struct {
	// Name identifies the service within the MultiClusterService; objects carry it as a label.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Template to render.
	Template TemplateReference `json:"template"`
	// Namespace on the target cluster for namespaced objects that name none, and the Helm
	// release namespace.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// CreateNamespace creates Namespace on the target when it is missing (default true), as Argo
	// CD's CreateNamespace and Helm's --create-namespace do. A namespace created this way is not
	// managed: it is neither pruned nor withdrawn with the service, nor watched for drift (declare
	// a Namespace object in the template for that). Set it to false to deploy only into
	// namespaces someone else creates: the service's objects then fail, naming the namespace, and
	// are retried every few seconds until it exists.
	// +optional
	CreateNamespace *bool `json:"createNamespace,omitempty"`
	// Values override the template's, as a YAML map. The text is a Go template with .Cluster.
	// +kubebuilder:validation:MaxLength=262144
	// +optional
	Values string `json:"values,omitempty"`
	// Disabled withdraws the service from every cluster (per the unmatch policy) while keeping
	// its declaration.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
	// Drift overrides the service set's drift policy for this service.
	// +optional
	Drift *ServiceDriftPolicy `json:"drift,omitempty"`
	// DependsOn names services of this service set that must be healthy on a cluster before
	// this one is applied there (each of their objects Current); until then the service waits,
	// its objects left as they are. Services in a cycle, or naming a service the set does not
	// have, are not applied, with a reason naming the cycle or the name.
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	DependsOn []string `json:"dependsOn,omitempty"`
	// HealthTimeout is how long the service's objects may take to become healthy after a
	// revision is applied; an object still progressing then makes the service, and its
	// cluster's status object, Healthy False with reason HealthTimeout. Default 5m.
	// +optional
	HealthTimeout *metav1.Duration `json:"healthTimeout,omitempty"`
}

// HealthCheck judges the health of the objects of one kind with CEL: for kinds kstatus does not
// know (a custom resource without Ready conditions), or to judge a kind differently.
type HealthCheck struct {
	// Group of the kind; empty for the core group.
	// +optional
	Group string `json:"group,omitempty"`
	// Kind the check applies to, in every version.
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// Expr is a CEL expression over the live object, self, that is true when the object is
	// healthy (Current), e.g. `has(self.status) && self.status.phase == "Ready"`. While it is
	// false (or cannot be evaluated: a field not there yet) the object is InProgress.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Expr string `json:"expr"`
	// Failed, if set, is a CEL expression over self that is true when the object failed and
	// will not become healthy without a change (Failed); it is evaluated first.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Failed string `json:"failed,omitempty"`
}

// MultiClusterServiceSpec declares which services go to which clusters, and how they are kept.
type MultiClusterServiceSpec struct {
	// ClusterSelector picks the target Clusters. An empty selector matches every Cluster.
	ClusterSelector ClusterSelector `json:"clusterSelector"`
	// Services to deploy, in order.
	// +kubebuilder:validation:MaxItems=128
	// +listType=map
	// +listMapKey=name
	// +optional
	Services []Service `json:"services,omitempty"`
	// Priority decides who owns an object two MultiClusterServices both declare: the higher
	// wins; on a tie the current owner keeps it.
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	Priority int32 `json:"priority,omitempty"`
	// SyncMode defaults to Continuous.
	// +kubebuilder:default=Continuous
	// +optional
	SyncMode SyncMode `json:"syncMode,omitempty"`
	// ReconcileInterval is the longest time between two full reconciles of a cluster, even when
	// nothing changed. Defaults to 10h.
	// +kubebuilder:default="10h"
	// +optional
	ReconcileInterval *metav1.Duration `json:"reconcileInterval,omitempty"`
	// UnmatchPolicy says what happens when a cluster stops matching. Defaults to Withdraw.
	// +kubebuilder:default=Withdraw
	// +optional
	UnmatchPolicy UnmatchPolicy `json:"unmatchPolicy,omitempty"`
	// DeletionPolicy says what happens when this object is deleted. Defaults to Delete.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
	// Adoption says what happens to a declared object that already exists on a target and that
	// Holdfast did not create: Never (default) leaves it untouched and reports a Conflict; Adopt
	// takes it over but never deletes it. Objects Holdfast created are not affected.
	// +kubebuilder:default=Never
	// +optional
	Adoption AdoptionPolicy `json:"adoption,omitempty"`
	// Drift says how drift is handled in ContinuousWithDriftDetection mode; by default it is
	// corrected at once.
	// +optional
	Drift *DriftPolicy `json:"drift,omitempty"`
	// HealthChecks judge the health of the objects of the kinds they name with CEL instead of
	// kstatus (see HealthCheck); one check per kind.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	HealthChecks []HealthCheck `json:"healthChecks,omitempty"`
	// ServiceAccount, if set, is who Holdfast acts as on each target cluster for this service
	// set: every read and write it makes there to apply, correct, prune or withdraw the set's
	// objects (creating a missing target namespace included) is made as
	// system:serviceaccount:<namespace>:<name> (impersonation), so the set gets only that
	// ServiceAccount's rights on the cluster. Create the ServiceAccount and its Roles on every
	// target, and give Holdfast's own identity there the impersonate verb on it. A request the
	// ServiceAccount may not make fails for that object only, saying what to grant; it is tried
	// again every minute. Drift watches keep Holdfast's own identity: they only read, and serve
	// every service set of the cluster. Unset: Holdfast's own identity does everything.
	// +optional
	ServiceAccount *ServiceAccountReference `json:"serviceAccount,omitempty"`
	// Notifications are outbound webhooks told about drift (detected, corrected, contested).
	// They are sent in the background with retries and never hold up reconciliation.
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	// +optional
	Notifications []NotificationTarget `json:"notifications,omitempty"`
	// Paused stops all changes to the selected clusters.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// MultiClusterServiceStatus summarises the per-cluster ClusterServiceStatus objects.
type MultiClusterServiceStatus struct {
	// Conditions: Ready is True when every matching cluster is Ready.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// MatchingClusters is the number of Clusters the selector matches.
	// +optional
	MatchingClusters int32 `json:"matchingClusters"`
	// ReadyClusters is the number of matching Clusters whose services are all in place.
	// +optional
	ReadyClusters int32 `json:"readyClusters"`
	// FailedClusters is the number of matching Clusters with a failure that needs attention.
	// +optional
	FailedClusters int32 `json:"failedClusters"`
	// HealthyClusters is the number of matching Clusters whose applied objects are all healthy
	// (their status object's Healthy condition is True).
	// +optional
	HealthyClusters int32 `json:"healthyClusters"`
	// DriftedClusters is the number of matching Clusters with objects drifted and not corrected
	// (Report mode, Contested); DriftedObjects counts those objects over all of them.
	// +optional
	DriftedClusters int32 `json:"driftedClusters"`
	// +optional
	DriftedObjects int32 `json:"driftedObjects"`
	// LastHandledReconcileAt echoes the holdfast.dev/reconcile-requested-at annotation once every
	// matching cluster handled it.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=holdfast,shortName=hfmcs
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Matching",type=integer,JSONPath=`.status.matchingClusters`
// +kubebuilder:printcolumn:name="Ready Clusters",type=integer,JSONPath=`.status.readyClusters`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failedClusters`
// +kubebuilder:printcolumn:name="Healthy Clusters",type=integer,JSONPath=`.status.healthyClusters`
// +kubebuilder:printcolumn:name="Drifted",type=integer,JSONPath=`.status.driftedClusters`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.syncMode`
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=`.spec.priority`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// MultiClusterService deploys services to every Cluster its selector matches and keeps them
// there. Each (MultiClusterService, Cluster) pair has a ClusterServiceStatus with the details.
type MultiClusterService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MultiClusterServiceSpec   `json:"spec,omitempty"`
	Status MultiClusterServiceStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// MultiClusterServiceList is a list of MultiClusterServices.
type MultiClusterServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MultiClusterService `json:"items"`
}

// GetConditions returns the MultiClusterService's conditions.
func (m *MultiClusterService) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions replaces the MultiClusterService's conditions.
func (m *MultiClusterService) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

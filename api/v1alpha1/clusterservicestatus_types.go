package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceState is the sync state of one managed object.
// +kubebuilder:validation:Enum=Pending;InSync;Failed;Conflict;WouldCreate;WouldUpdate;WouldDelete;Drifted;Missing;Correcting;Ignored;Contested;Uncorrectable
type ResourceState string

const (
	// ResourcePending: declared, not applied yet.
	ResourcePending ResourceState = "Pending"
	// ResourceInSync: the cluster holds what was declared.
	ResourceInSync ResourceState = "InSync"
	// ResourceFailed: the last apply of the object failed; the message says why.
	ResourceFailed ResourceState = "Failed"
	// ResourceConflict: another MultiClusterService owns the object; conflictWith names it.
	ResourceConflict ResourceState = "Conflict"
	// ResourceWouldCreate, ResourceWouldUpdate and ResourceWouldDelete are DryRun findings.
	ResourceWouldCreate ResourceState = "WouldCreate"
	ResourceWouldUpdate ResourceState = "WouldUpdate"
	ResourceWouldDelete ResourceState = "WouldDelete"
	// ResourceDrifted: a field Holdfast applies was changed by someone else.
	ResourceDrifted ResourceState = "Drifted"
	// ResourceMissing: the object was deleted from the cluster.
	ResourceMissing ResourceState = "Missing"
	// ResourceCorrecting: Holdfast is putting the object back.
	ResourceCorrecting ResourceState = "Correcting"
	// ResourceIgnored: the object is exempt from drift handling.
	ResourceIgnored ResourceState = "Ignored"
	// ResourceContested: another field manager kept reverting Holdfast's corrections. With the
	// fight action Backoff (the default) Holdfast keeps correcting it with an exponential backoff;
	// with Stop it waits for a manual request. lastDrift names the manager.
	ResourceContested ResourceState = "Contested"
	// ResourceUncorrectable: the object drifted and Holdfast's correction was refused by the
	// API server (an immutable field, an admission policy, an invalid result); the message gives
	// the API server's reason. The drift stays open and the correction is retried with backoff.
	ResourceUncorrectable ResourceState = "Uncorrectable"
)

// ResourceRef identifies one object on a target cluster.
type ResourceRef struct {
	// +optional
	Group   string `json:"group,omitempty"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// ResourceStatus is one managed object: its state and what Holdfast last applied. The list of
// them is the inventory used for pruning.
type ResourceStatus struct {
	ResourceRef `json:",inline"`
	// Service that declares the object.
	Service string `json:"service"`
	// State of the object.
	State ResourceState `json:"state"`
	// Message explains a Failed, Conflict or Would* state.
	// +optional
	Message string `json:"message,omitempty"`
	// ConflictWith names the MultiClusterService that owns the object instead.
	// +optional
	ConflictWith string `json:"conflictWith,omitempty"`
	// Diff is what a DryRun would change (Secret values redacted).
	// +optional
	Diff string `json:"diff,omitempty"`
	// Desired is a digest of the object as last applied; Owned a digest of the values of the
	// fields Holdfast owns in the live object right after. Together they let a reconcile with
	// nothing changed skip the object without writing. Each is the first 128 bits of a SHA-256
	// in hex (recorded before: "sha256:" and the whole sum, which compares the same).
	// +optional
	Desired string `json:"desired,omitempty"`
	// +optional
	Owned string `json:"owned,omitempty"`
	// Adopted reports that the object existed on the cluster before Holdfast applied it (spec
	// adoption Adopt): it is left in place, never deleted, when withdrawn or pruned.
	// +optional
	Adopted bool `json:"adopted,omitempty"`
	// LastDrift is the drift that left the object Drifted, Missing or Contested; cleared once
	// the object is back in sync.
	// +optional
	LastDrift *DriftDetail `json:"lastDrift,omitempty"`
	// Health of the object on the cluster as kstatus computes it, when it was last applied or
	// looked at.
	// +optional
	Health HealthStatus `json:"health,omitempty"`
	// HealthMessage says why the object is not Current.
	// +optional
	HealthMessage string `json:"healthMessage,omitempty"`
}

// HealthStatus is an object's health, kstatus's status of it.
// +kubebuilder:validation:Enum=Current;InProgress;Failed;Terminating;NotFound;Unknown
type HealthStatus string

// Health statuses, kstatus's.
const (
	// HealthCurrent: the object is what its spec asks for (a Deployment Available with its new
	// pods, a ConfigMap at once).
	HealthCurrent HealthStatus = "Current"
	// HealthInProgress: the object is on its way (pods starting, a rollout progressing).
	HealthInProgress HealthStatus = "InProgress"
	// HealthFailed: the object will not get there without a change (a Deployment past its
	// progress deadline, a failed Job).
	HealthFailed HealthStatus = "Failed"
	// HealthTerminating: the object is being deleted.
	HealthTerminating HealthStatus = "Terminating"
	// HealthNotFound: the object is not on the cluster.
	HealthNotFound HealthStatus = "NotFound"
	// HealthUnknown: its health could not be computed.
	HealthUnknown HealthStatus = "Unknown"
)

// DriftType says what happened to a managed object.
// +kubebuilder:validation:Enum=Changed;Deleted
type DriftType string

const (
	// DriftChanged: fields Holdfast applied have other values.
	DriftChanged DriftType = "Changed"
	// DriftDeleted: the object was deleted.
	DriftDeleted DriftType = "Deleted"
)

// MaxDriftFields bounds the fields of one drift record (DriftDetail.Fields' MaxItems).
const MaxDriftFields = 32

// FieldChange is one field Holdfast applied whose value someone else changed.
type FieldChange struct {
	// Path in structured-merge-diff notation, e.g. `.spec.replicas`.
	Path string `json:"path"`
	// Old and New are JSON values, empty when the field is absent; Secret values are redacted.
	// +optional
	Old string `json:"old,omitempty"`
	// +optional
	New string `json:"new,omitempty"`
}

// DriftDetection says how a drift was found.
// +kubebuilder:validation:Enum=Watch;Comparison
type DriftDetection string

const (
	// DriftDetectedByWatch: a watch event on the cluster showed the change as it happened.
	DriftDetectedByWatch DriftDetection = "Watch"
	// DriftDetectedByComparison: a comparison of the cluster with the declaration found it
	// (after an outage, a controller restart or a full reconcile); the time of the change is
	// not known, and old values are the declared ones.
	DriftDetectedByComparison DriftDetection = "Comparison"
)

// DriftResolution says how a drift ended.
// +kubebuilder:validation:Enum=Corrected;Restored
type DriftResolution string

const (
	// DriftCorrected: Holdfast put the object back (a correction, or a deploy of a new revision).
	DriftCorrected DriftResolution = "Corrected"
	// DriftRestored: the object was found back as declared without Holdfast's write: someone
	// else put it back (RestoredBy), e.g. by hand while the drift waited in Report mode.
	DriftRestored DriftResolution = "Restored"
)

// DriftRecord is one drift Holdfast saw on the cluster.
type DriftRecord struct {
	ResourceRef `json:",inline"`
	// Service that declares the object.
	// +optional
	Service     string `json:"service,omitempty"`
	DriftDetail `json:",inline"`
	// CorrectedTime is when the drift ended: the object was found back as declared, put back
	// by Holdfast or by someone else (Resolution); empty while it is not.
	// +optional
	CorrectedTime *metav1.MicroTime `json:"correctedTime,omitempty"`
	// Resolution says how the drift ended, once CorrectedTime is set; Corrected when empty.
	// +optional
	Resolution DriftResolution `json:"resolution,omitempty"`
	// RestoredBy is who put the object back, for Restored, as far as its managedFields tell.
	// +optional
	RestoredBy *ChangeAuthor `json:"restoredBy,omitempty"`
	// OnRequest is true when Holdfast put the object back on a request (holdfast correct, the
	// web view) after leaving it Contested: notified as Resumed.
	// +optional
	OnRequest bool `json:"onRequest,omitempty"`
}

// ChangeAuthor is who made a change on a cluster.
type ChangeAuthor struct {
	// Manager is the field manager, as the API server recorded it.
	// +optional
	Manager string `json:"manager,omitempty"`
	// Operation (Update or Apply) of the change.
	// +optional
	Operation string `json:"operation,omitempty"`
	// User is who made the change, as the target's API server authenticated them, where
	// drift.attribution is Auto and the object carries the stamp of this very change.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	User string `json:"user,omitempty"`
}

// DriftDetail says what changed in one drift, and who changed it.
type DriftDetail struct {
	// Type of drift.
	Type DriftType `json:"type"`
	// Fields that changed (for Changed), with old and new values.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Fields []FieldChange `json:"fields,omitempty"`
	// Manager is the field manager that made the change, as the API server recorded it;
	// empty when unknown (the API server does not record who deletes).
	// +optional
	Manager string `json:"manager,omitempty"`
	// Operation (Update or Apply) and Subresource (e.g. scale) of the change.
	// +optional
	Operation string `json:"operation,omitempty"`
	// +optional
	Subresource string `json:"subresource,omitempty"`
	// User is who made the change, as the target's API server authenticated them (a person's
	// user name, system:serviceaccount:NAMESPACE:NAME), when drift.attribution is Auto and the
	// object carries the stamp of this very change; empty when unknown.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	User string `json:"user,omitempty"`
	// DetectedTime is when Holdfast saw the change, to the microsecond (latencies are
	// sub-second).
	DetectedTime metav1.MicroTime `json:"detectedTime"`
	// Detection says how the drift was found; Watch when empty.
	// +optional
	Detection DriftDetection `json:"detection,omitempty"`
	// ResourceVersion is the object's resourceVersion in which the drift was seen: the changed
	// version, or for a deletion the deletion's as the watch reported it; empty when a
	// comparison found the object gone. A later report of the same or an older version (a
	// second watch, a watch behind a comparison) is the same drift, not a new one.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// MaxDriftRecords bounds status.drifts.
const MaxDriftRecords = 20

// ServiceStatus is the state of one service on the cluster.
type ServiceStatus struct {
	// Name of the service.
	Name string `json:"name"`
	// Revision is a digest of the service's rendered objects last applied.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Ready is True when every object of the service is in sync.
	Ready metav1.ConditionStatus `json:"ready"`
	// Reason is a CamelCase reason for Ready.
	Reason string `json:"reason"`
	// Message says what to fix when the service is not Ready.
	// +optional
	Message string `json:"message,omitempty"`
	// Objects is the number of objects the service declares.
	// +optional
	Objects int32 `json:"objects"`
	// LastAppliedTime is when the service was last applied completely.
	// +optional
	LastAppliedTime *metav1.Time `json:"lastAppliedTime,omitempty"`
	// RevisionTime is when Revision was first applied completely: what the health timeout
	// counts from.
	// +optional
	RevisionTime *metav1.Time `json:"revisionTime,omitempty"`
	// Health is the least healthy of the service's objects (Current when all are).
	// +optional
	Health HealthStatus `json:"health,omitempty"`
	// HealthMessage names the first object that is not Current, and why.
	// +optional
	HealthMessage string `json:"healthMessage,omitempty"`
	// Overrides names the service's overrides that apply to this cluster, in the order they
	// were applied.
	// +listType=atomic
	// +optional
	Overrides []string `json:"overrides,omitempty"`
}

// ClusterServiceStatusSpec identifies the pair the status is about. Holdfast writes it.
type ClusterServiceStatusSpec struct {
	// MultiClusterService is the name of the declaring MultiClusterService.
	MultiClusterService string `json:"multiClusterService"`
	// Cluster is the name of the Cluster, in this object's namespace.
	Cluster string `json:"cluster"`
	// CleanupPolicy says what deleting this object does to the deployed objects: Delete
	// withdraws them, Orphan leaves them. Holdfast sets it from the MultiClusterService's
	// unmatch or deletion policy before deleting the object.
	// +kubebuilder:default=Delete
	// +optional
	CleanupPolicy DeletionPolicy `json:"cleanupPolicy,omitempty"`
	// Revision, set by the MultiClusterService's rollout (spec.rollout), names the
	// ControllerRevision, in this object's namespace, whose services and templates are
	// deployed to the cluster; empty: the MultiClusterService and its templates as they are.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Revision string `json:"revision,omitempty"`
	// Held, set by the MultiClusterService's rollout on a cluster that only the revision
	// waiting for approval selects (a changed cluster selector), deploys nothing: the cluster
	// previews the revision, and is given it once it is approved.
	// +optional
	Held bool `json:"held,omitempty"`
}

// ClusterServiceStatusInitialization reports one-way milestones.
type ClusterServiceStatusInitialization struct {
	// Provisioned is true once every service was deployed to the cluster completely.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// ClusterServiceStatusStatus is the state of a MultiClusterService's services on one cluster.
type ClusterServiceStatusStatus struct {
	// Conditions: ClusterReady, Rendered, Applied, and Ready summarising them.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation of this object the status was computed from (as
	// kstatus and kubectl wait expect).
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ObservedServiceSetGeneration is the MultiClusterService generation last reconciled
	// completely.
	// +optional
	ObservedServiceSetGeneration int64 `json:"observedServiceSetGeneration,omitempty"`
	// Revision is the rollout revision (spec.revision) last reconciled completely.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Initialization reports one-way milestones.
	// +optional
	Initialization *ClusterServiceStatusInitialization `json:"initialization,omitempty"`
	// Preview is the last preview of a revision on the cluster, made for the service set's
	// rollout while it held that revision for approval (PreviewRequest).
	// +optional
	Preview *ClusterPreview `json:"preview,omitempty"`
	// SyncMode in effect at the last reconcile.
	// +optional
	SyncMode SyncMode `json:"syncMode,omitempty"`
	// Services, in declaration order.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	// +optional
	Services []ServiceStatus `json:"services,omitempty"`
	// Resources is every managed object; it is the inventory. When the inventory is too large
	// for this object (see inventory), it is kept in ClusterServiceInventory shards and
	// Resources lists only the entries not InSync, at most MaxSummarizedResources.
	// +listType=atomic
	// +optional
	Resources []ResourceStatus `json:"resources,omitempty"`
	// Inventory names the ClusterServiceInventory shards that hold the inventory when it is too
	// large for this object; absent when Resources holds it all.
	// +optional
	Inventory *InventoryShards `json:"inventory,omitempty"`
	// ResourceCount, InSyncCount, FailedCount and ConflictCount count Resources by state.
	// +optional
	ResourceCount int32 `json:"resourceCount"`
	// +optional
	InSyncCount int32 `json:"inSyncCount"`
	// +optional
	FailedCount int32 `json:"failedCount"`
	// +optional
	ConflictCount int32 `json:"conflictCount"`
	// DriftedCount counts Resources that are Drifted, Missing or Contested: not corrected.
	// +optional
	DriftedCount int32 `json:"driftedCount"`
	// LastFullReconcileTime is when every service was last rendered, compared with the cluster
	// and applied where needed. The next full reconcile is due reconcileInterval after it, also
	// across controller restarts.
	// +optional
	LastFullReconcileTime *metav1.Time `json:"lastFullReconcileTime,omitempty"`
	// Drifts are the latest drifts seen, newest first, at most MaxDriftRecords.
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	Drifts []DriftRecord `json:"drifts,omitempty"`
	// DriftCount is how many drifts were seen in all.
	// +optional
	DriftCount int64 `json:"driftCount,omitempty"`
	// LastHandledReconcileAt is the last value of the holdfast.dev/reconcile-requested-at
	// annotation (on this object or its MultiClusterService) that a reconcile handled.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
	// HandledRequests are the values of the holdfast.dev/reconcile-requested-at annotation, on
	// the MultiClusterService and on this object, that the last reconcile handling a request
	// found: each is handled until it changes, whichever lastHandledReconcileAt echoes.
	// +optional
	HandledRequests *HandledRequests `json:"handledRequests,omitempty"`
}

// HandledRequests are the values of holdfast.dev/reconcile-requested-at a reconcile handled, by
// where the annotation was set.
type HandledRequests struct {
	// ServiceSet is the value on the MultiClusterService.
	// +optional
	ServiceSet string `json:"serviceSet,omitempty"`
	// Status is the value on the ClusterServiceStatus itself.
	// +optional
	Status string `json:"status,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=holdfast,shortName=hfcss
// +kubebuilder:printcolumn:name="Service Set",type=string,JSONPath=`.spec.multiClusterService`
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Healthy",type=string,JSONPath=`.status.conditions[?(@.type=="Healthy")].status`
// +kubebuilder:printcolumn:name="Objects",type=integer,JSONPath=`.status.resourceCount`
// +kubebuilder:printcolumn:name="In Sync",type=integer,JSONPath=`.status.inSyncCount`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failedCount`
// +kubebuilder:printcolumn:name="Drifted",type=integer,JSONPath=`.status.driftedCount`
// +kubebuilder:printcolumn:name="Drifts",type=integer,JSONPath=`.status.driftCount`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.status.syncMode`,priority=1
// +kubebuilder:printcolumn:name="Last Full",type=date,JSONPath=`.status.lastFullReconcileTime`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterServiceStatus holds the state of one MultiClusterService's services on one Cluster,
// so that a fleet of a thousand clusters never bloats one object. Holdfast creates one per
// matching Cluster, in the Cluster's namespace, and deletes it (withdrawing the services,
// per policy) when the Cluster stops matching.
type ClusterServiceStatus struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterServiceStatusSpec   `json:"spec,omitempty"`
	Status ClusterServiceStatusStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterServiceStatusList is a list of ClusterServiceStatuses.
type ClusterServiceStatusList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterServiceStatus `json:"items"`
}

// GetConditions returns the ClusterServiceStatus's conditions.
func (c *ClusterServiceStatus) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces the ClusterServiceStatus's conditions.
func (c *ClusterServiceStatus) SetConditions(conds []metav1.Condition) {
	c.Status.Conditions = conds
}

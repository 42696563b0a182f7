package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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
	// DependsOn names services that must be applied and healthy on a cluster before this one is
	// applied there (each of their objects Current): "db" names a service of this service set,
	// "<multiclusterservice>/<service>" a service of another service set (a ServiceSet's is
	// "<namespace>.<name>", its status.multiClusterService) as its ClusterServiceStatus for the
	// same cluster records it. Until then the service waits, its objects left as they are, and so
	// it does while the other service set does not exist, does not select the cluster or does not
	// declare that service. Services in a cycle (within the set or across sets), or naming a
	// service the set does not have, are not applied, with a reason naming the cycle or the name;
	// so is a ServiceSet naming another namespace's service set.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=317
	// +kubebuilder:validation:items:Pattern=`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +listType=set
	// +optional
	DependsOn []string `json:"dependsOn,omitempty"`
	// HealthTimeout is how long the service's objects may take to become healthy after a
	// revision is applied; an object still progressing then makes the service, and its
	// cluster's status object, Healthy False with reason HealthTimeout. Default 5m.
	// +optional
	HealthTimeout *metav1.Duration `json:"healthTimeout,omitempty"`
	// Overrides adjust the service for the clusters they select, in order: their values are
	// merged over the service's before rendering, and their patches applied to the rendered
	// objects after it. They are part of the service set's declaration (a change is a new
	// revision), and each status object names those that applied to its cluster. An override
	// that fails (values that are not a map, a patch that does not apply or targets nothing)
	// fails the service on the clusters it selects only, naming the override.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	Overrides []ServiceOverride `json:"overrides,omitempty"`
}

// ServiceOverride adjusts a service for the clusters its selector matches.
type ServiceOverride struct {
	// Name identifies the override in status and messages.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// ClusterSelector selects the clusters, by their labels, the override applies to; empty
	// selects every cluster the service set selects.
	// +optional
	ClusterSelector metav1.LabelSelector `json:"clusterSelector,omitempty"`
	// Values are merged over the service's values (and the overrides' before this one), as a
	// YAML map; a Go template with .Cluster, as the service's values are.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	Values string `json:"values,omitempty"`
	// Patches are applied to the rendered objects, in order, as Kustomize's patches are: a
	// strategic-merge patch (YAML naming the object it patches, or any objects Target selects),
	// or a JSON 6902 patch (a YAML or JSON list of operations) with a Target.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Patches []OverridePatch `json:"patches,omitempty"`
}

// OverridePatch is one patch of an override, as a Kustomize patches entry.
type OverridePatch struct {
	// Patch is the strategic-merge or JSON 6902 patch.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=65536
	Patch string `json:"patch"`
	// Target selects the objects to patch; without it a strategic-merge patch patches the
	// object it names. A patch whose target selects no object fails.
	// +optional
	Target *PatchTarget `json:"target,omitempty"`
}

// PatchTarget selects rendered objects, as a Kustomize patch target: every field set must match.
type PatchTarget struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// Name, a regular expression matching the whole name.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace, a regular expression matching the whole namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// LabelSelector, a label selector in its string form (app=web,tier!=db).
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
	// AnnotationSelector, an annotation selector in the same form.
	// +optional
	AnnotationSelector string `json:"annotationSelector,omitempty"`
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
	// Rollout, if set, takes a change of the services (their templates, values, the templates'
	// sources) to the matching clusters wave by wave instead of everywhere at once: each
	// cluster deploys a revision, a snapshot of the services and their templates, and the next
	// clusters get the new revision only while the ones before are healthy. Unset: every
	// cluster follows the service set as it is.
	// +optional
	Rollout *RolloutStrategy `json:"rollout,omitempty"`
}

// RolloutStrategy orders the clusters into waves and says how fast a new revision goes through
// them and when it stops.
// +kubebuilder:validation:XValidation:rule="!(has(self.waves) && has(self.waveLabel))",message="set waves or waveLabel, not both"
type RolloutStrategy struct {
	// Waves put each cluster in the first wave whose selector matches its labels; clusters no
	// wave matches form a last wave. Neither waves nor waveLabel: one wave of every cluster.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	Waves []RolloutWave `json:"waves,omitempty"`
	// WaveLabel puts the clusters in waves by the value of this label, in ascending order
	// (e.g. holdfast.dev/wave: "1", "2", "3"; or stage: canary, prod sorted as text); clusters
	// without the label form a last wave.
	// +kubebuilder:validation:MaxLength=317
	// +optional
	WaveLabel string `json:"waveLabel,omitempty"`
	// MaxInFlight is how many clusters of a wave take the new revision at once and are not yet
	// healthy with it: a number, or a percentage of the wave's clusters (rounded up). Defaults
	// to 100%: the whole wave at once.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^([1-9][0-9]?|100)%$')",message="maxInFlight is a number of clusters (at least 1) or a percentage from 1% to 100%"
	// +optional
	MaxInFlight *intstr.IntOrString `json:"maxInFlight,omitempty"`
	// FailureThreshold is how many clusters may fail with the new revision (not healthy before
	// their health timeout, not applied, not rendered) before the rollout halts: a number, or a
	// percentage of the matching clusters (rounded up). Defaults to 1: the first failure halts.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^([1-9][0-9]?|100)%$')",message="failureThreshold is a number of clusters (at least 1) or a percentage from 1% to 100%"
	// +optional
	FailureThreshold *intstr.IntOrString `json:"failureThreshold,omitempty"`
	// PauseBetweenWaves is how long a healthy wave is watched before the next one starts.
	// +optional
	PauseBetweenWaves *metav1.Duration `json:"pauseBetweenWaves,omitempty"`
	// RevisionHistoryLimit is how many revisions are kept (as ControllerRevisions next to the
	// ClusterServiceStatuses) beyond those clusters still deploy. Defaults to 10.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
	// Approval Manual holds each new revision (after the first) until it is approved, having
	// previewed it on every matching cluster; Automatic (default) rolls it out at once.
	// +kubebuilder:default=Automatic
	// +optional
	Approval ApprovalPolicy `json:"approval,omitempty"`
}

// RolloutWave is one wave of clusters.
type RolloutWave struct {
	// Name names the wave in status and events.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// ClusterSelector selects the wave's clusters by their labels.
	ClusterSelector metav1.LabelSelector `json:"clusterSelector"`
}

// RolloutPhase is where a rollout is.
// +kubebuilder:validation:Enum=Previewing;Previewed;Progressing;Pausing;Halted;Aborted;Complete
type RolloutPhase string

const (
	// RolloutPreviewing: approval is Manual and the revision is being previewed on the matching
	// clusters; nothing changes on them.
	RolloutPreviewing RolloutPhase = "Previewing"
	// RolloutPreviewed: every matching cluster previewed the revision; it waits for `holdfast
	// rollout approve`.
	RolloutPreviewed RolloutPhase = "Previewed"
	// RolloutProgressing: a wave is taking the new revision.
	RolloutProgressing RolloutPhase = "Progressing"
	// RolloutPausing: a wave is healthy and the next waits for spec.rollout.pauseBetweenWaves.
	RolloutPausing RolloutPhase = "Pausing"
	// RolloutHalted: the failure threshold was reached; no more clusters take the new revision
	// until `holdfast rollout resume`.
	RolloutHalted RolloutPhase = "Halted"
	// RolloutAborted: `holdfast rollout abort` sent every cluster back to the stable revision;
	// the next change of the services starts a new rollout.
	RolloutAborted RolloutPhase = "Aborted"
	// RolloutComplete: every cluster has the revision.
	RolloutComplete RolloutPhase = "Complete"
)

// RolloutStatus is the state of the service set's rollout.
type RolloutStatus struct {
	// Revision is the revision being rolled out, or rolled out: the name of its
	// ControllerRevision.
	Revision string `json:"revision"`
	// StableRevision is the last revision every cluster had; abort goes back to it. Empty
	// before the first rollout completed.
	// +optional
	StableRevision string `json:"stableRevision,omitempty"`
	// Phase is where the rollout is.
	Phase RolloutPhase `json:"phase"`
	// Wave is the index of the wave taking the revision (or that took it last).
	Wave int32 `json:"wave"`
	// Waves are the waves in order, with their progress.
	// +kubebuilder:validation:MaxItems=33
	// +listType=atomic
	// +optional
	Waves []RolloutWaveStatus `json:"waves,omitempty"`
	// FailedClusters are the clusters that failed with the revision (at most 20 are named),
	// and why.
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	FailedClusters []RolloutFailure `json:"failedClusters,omitempty"`
	// Failures counts the clusters that failed with the revision and count towards the
	// failure threshold (those that failed before a resume do not).
	// +optional
	Failures int32 `json:"failures,omitempty"`
	// StartTime is when the rollout of the revision started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// WaveHealthyTime is when the current wave became healthy (the pause counts from it).
	// +optional
	WaveHealthyTime *metav1.Time `json:"waveHealthyTime,omitempty"`
	// CompletionTime is when every cluster had the revision.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// LastHandledResume and LastHandledAbort echo the holdfast.dev/rollout-resume and
	// holdfast.dev/rollout-abort annotations once handled.
	// +optional
	LastHandledResume string `json:"lastHandledResume,omitempty"`
	// +optional
	LastHandledAbort string `json:"lastHandledAbort,omitempty"`
	// LastHandledApprove echoes the holdfast.dev/rollout-approve annotation once handled.
	// +optional
	LastHandledApprove string `json:"lastHandledApprove,omitempty"`
	// Preview summarises the preview of Revision (approval Manual), kept once approved as what
	// was approved.
	// +optional
	Preview *RolloutPreview `json:"preview,omitempty"`
	// Approval records who approved Revision, when, and the preview they saw.
	// +optional
	Approval *RolloutApproval `json:"approval,omitempty"`
	// ClusterSelector is the cluster selector in force: the service set's, as it was when the
	// rollout last went ahead. While a revision with another selector waits for approval,
	// clusters only this one selects keep what they have, and clusters only the new one
	// selects deploy nothing (spec.held on their status object) and preview what they would
	// gain; approved, the new selector is in force.
	// +optional
	ClusterSelector *ClusterSelector `json:"clusterSelector,omitempty"`
}

// RolloutWaveStatus is one wave's progress.
type RolloutWaveStatus struct {
	Name string `json:"name"`
	// Clusters in the wave; Updated of them have the revision; Healthy of those are Ready with
	// it; Failed failed with it.
	Clusters int32 `json:"clusters"`
	Updated  int32 `json:"updated"`
	Healthy  int32 `json:"healthy"`
	Failed   int32 `json:"failed"`
}

// RolloutFailure is a cluster that failed with the revision.
type RolloutFailure struct {
	// Cluster is namespace/name of the Cluster.
	Cluster string `json:"cluster"`
	// Reason and Message are those of its ClusterServiceStatus's Ready condition.
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	// Resumed: the failure was there when the rollout was resumed, and no longer counts.
	// +optional
	Resumed bool `json:"resumed,omitempty"`
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
	// Rollout is the state of the rollout of the services' latest revision (spec.rollout).
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`
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
// +kubebuilder:printcolumn:name="Rollout",type=string,JSONPath=`.status.rollout.phase`
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

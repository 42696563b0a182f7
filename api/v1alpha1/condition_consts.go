package v1alpha1

// Condition types shared by every Holdfast object.
const (
	// ReadyCondition summarises an object's other conditions: True when the object is doing what
	// was declared, False with the reason of the first condition that stands in the way.
	ReadyCondition = "Ready"

	// PausedCondition is True while a user paused the object.
	PausedCondition = "Paused"
)

// Reasons shared by every Holdfast object.
const (
	// ReadyReason: every condition the Ready summary looks at is fine.
	ReadyReason = "Ready"
	// NotReadyReason: at least one condition is not fine and gives no reason of its own.
	NotReadyReason = "NotReady"
	// PausedReason: the object is paused.
	PausedReason = "Paused"
	// NotPausedReason: the object is not paused.
	NotPausedReason = "NotPaused"
	// ProbingReason: the state is not known yet; set on the first visit.
	ProbingReason = "Probing"
)

// Cluster condition types.
const (
	// ClusterConnectedCondition is True while Holdfast can reach the cluster's API server and
	// authenticate with the kubeconfig. A failure shorter than the connection grace period keeps
	// the last known state.
	ClusterConnectedCondition = "Connected"
)

// Reasons of the Cluster Connected condition. Each failure reason names what to fix.
const (
	// ConnectedReason: the last probe reached the API server and authenticated.
	ConnectedReason = "Connected"
	// SecretNotFoundReason: the kubeconfig Secret does not exist.
	SecretNotFoundReason = "SecretNotFound"
	// SecretKeyNotFoundReason: the Secret exists but has no such key.
	SecretKeyNotFoundReason = "SecretKeyNotFound"
	// InvalidKubeconfigReason: the key does not hold a kubeconfig Holdfast can use.
	InvalidKubeconfigReason = "InvalidKubeconfig"
	// NoCurrentContextReason: the kubeconfig has no current context to choose a cluster by.
	NoCurrentContextReason = "NoCurrentContext"
	// UnreachableReason: the API server did not answer (refused, timed out, DNS, 5xx).
	UnreachableReason = "Unreachable"
	// TLSFailedReason: the TLS handshake failed (unknown authority, wrong host name, not TLS).
	TLSFailedReason = "TLSFailed"
	// CredentialsRejectedReason: the API server did not accept the kubeconfig's credentials.
	CredentialsRejectedReason = "CredentialsRejected"
	// AgentNotReportingReason: a Pull cluster's agent has not reported (its heartbeat Lease)
	// within the connection grace, or never did.
	AgentNotReportingReason = "AgentNotReporting"
	// NamespaceSharedReason: a Pull cluster shares its namespace with another Cluster. Its
	// namespace is its agent's boundary on the hub: the agent would read the other's work.
	NamespaceSharedReason = "NamespaceShared"
	// AgentVersionUnsupportedReason: a Pull cluster's agent is of a version the hub does not
	// support: newer than the hub, or older by more than one minor version.
	AgentVersionUnsupportedReason = "AgentVersionUnsupported"
)

// The Cluster's AdmissionPolicies condition says whether the cluster's API server serves the
// admission policy APIs drift attribution and prevention use. It does not feed Ready: a cluster
// without them is handled as before, drift detected and corrected, the field manager named.
const (
	// AdmissionPoliciesCondition is True when the cluster serves admissionregistration.k8s.io/v1
	// mutatingadmissionpolicies and validatingadmissionpolicies, False when it lacks one or both
	// (the message names them, the Kubernetes version that brings them and what falls back),
	// Unknown while Holdfast has not read the cluster's APIs (not connected, paused).
	AdmissionPoliciesCondition = "AdmissionPolicies"
	// AdmissionPoliciesServedReason: both admission policy APIs are served.
	AdmissionPoliciesServedReason = "AdmissionPoliciesServed"
	// AdmissionPoliciesUnsupportedReason: the cluster does not serve one or both of them
	// (MutatingAdmissionPolicy before Kubernetes 1.36, ValidatingAdmissionPolicy before 1.30,
	// or the API switched off).
	AdmissionPoliciesUnsupportedReason = "AdmissionPoliciesUnsupported"
)

// The Cluster's DuplicateRegistration condition says whether another Cluster reaches the same
// cluster (the same status.clusterID): Cluster API discovery beside a hand-made registration, two
// hubs' worth of objects, a copy-paste. It does not feed Ready: both keep working, and the
// objects the two registrations declare differently are conflicts in both status objects,
// which neither rewrites.
const (
	// DuplicateRegistrationCondition is True when other Clusters have the same clusterID (the
	// message names them), False when none has, Unknown while the clusterID is not known.
	DuplicateRegistrationCondition = "DuplicateRegistration"
	// RegisteredTwiceReason: other Clusters reach the same cluster.
	RegisteredTwiceReason = "RegisteredTwice"
	// RegisteredOnceReason: no other Cluster reaches it.
	RegisteredOnceReason = "RegisteredOnce"
	// ClusterIDUnknownReason: the cluster's identity is not known (not connected yet, paused, or
	// the kubeconfig's identity may not read the kube-system namespace).
	ClusterIDUnknownReason = "ClusterIDUnknown"
)

// ClusterServiceStatus and MultiClusterService condition types.
const (
	// TargetClusterReadyCondition, on a ClusterServiceStatus or MultiClusterService (not on a
	// Cluster, whose own condition is ClusterConnectedCondition), is True while the target
	// Cluster exists, is not paused and is Connected.
	TargetClusterReadyCondition = "ClusterReady"
	// RenderedCondition is True when every enabled service rendered.
	RenderedCondition = "Rendered"
	// AppliedCondition is True when every rendered object is in place on the cluster.
	AppliedCondition = "Applied"
	// HealthyCondition is True when every applied object is healthy as kstatus computes it
	// (Current): a Deployment Available with its new pods, a Job complete, a ConfigMap at once.
	// Unknown (reason Progressing) while some object is still becoming healthy, False (reason
	// Unhealthy or HealthTimeout) when one failed or did not become healthy in time; the
	// message names the first such object and why.
	HealthyCondition = "Healthy"
)

// Reasons of the Healthy condition.
const (
	// HealthyReason: every applied object is healthy.
	HealthyReason = "Healthy"
	// UnhealthyReason: an applied object failed (kstatus Failed), e.g. a Deployment past its
	// progress deadline.
	UnhealthyReason = "Unhealthy"
	// HealthTimeoutReason: an applied object was still not healthy the service's healthTimeout
	// after its revision was applied.
	HealthTimeoutReason = "HealthTimeout"
	// InvalidHealthCheckReason: a health check of the service set does not compile, or two
	// name the same kind.
	InvalidHealthCheckReason = "InvalidHealthCheck"
)

// Reasons of a service's readiness that come from its dependencies (spec.services[].dependsOn).
const (
	// WaitingForDependenciesReason: a service waits for the services it depends on, of its set
	// or of other service sets, to be applied and healthy on the cluster before it is applied.
	WaitingForDependenciesReason = "WaitingForDependencies"
	// InvalidDependencyReason: a service depends on a service the set does not have, has a
	// dependsOn entry that names no service, or is in a dependency cycle (within its set or
	// across service sets); it is not applied.
	InvalidDependencyReason = "InvalidDependency"
	// RolloutHaltedReason: the rollout of a new revision reached its failure threshold; the
	// message names the clusters that failed and why (`holdfast rollout resume|abort`).
	RolloutHaltedReason = "RolloutHalted"
	// RolloutAbortedReason: the rollout was aborted and every cluster sent back to the stable
	// revision; the services as declared are not deployed until they change again.
	RolloutAbortedReason = "RolloutAborted"
	// RollingOutReason: a new revision is going through the waves.
	RollingOutReason = "RollingOut"
	// RevisionFailedReason: the revision of the services cannot be made or read (a template
	// missing, a snapshot too large, a ControllerRevision gone).
	RevisionFailedReason = "RevisionFailed"
	// RevisionRefusedReason: the ControllerRevision a status object names is not one Holdfast
	// made for its service set (another owner, or data that does not match its name); nothing
	// is deployed from it.
	RevisionRefusedReason = "RevisionRefused"
)

// Reasons of ClusterServiceStatus and MultiClusterService conditions.
const (
	// ClusterNotFoundReason: the Cluster named by the status object does not exist.
	ClusterNotFoundReason = "ClusterNotFound"
	// ClusterNotReadyReason: the Cluster is not Connected; Holdfast waits for it.
	ClusterNotReadyReason = "ClusterNotReady"
	// ClusterUnresponsiveReason: the Cluster's API server let requests time out lately; nothing
	// is sent to it until its backoff ends, then one request at a time until one is answered.
	ClusterUnresponsiveReason = "ClusterUnresponsive"
	// ClusterPausedReason: the Cluster is paused.
	ClusterPausedReason = "ClusterPaused"
	// RenderedReason: every service rendered.
	RenderedReason = "Rendered"
	// RenderFailedReason: a service did not render; the message names it, the object and what to fix.
	RenderFailedReason = "RenderFailed"
	// TemplateNotFoundReason: a service names a ServiceTemplate that does not exist.
	TemplateNotFoundReason = "TemplateNotFound"
	// SourceNotFoundReason: a template's ConfigMap or Secret does not exist.
	SourceNotFoundReason = "SourceNotFound"
	// SourceUnavailableReason: a chart repository or registry could not be reached; retried.
	SourceUnavailableReason = "SourceUnavailable"
	// AppliedReason: every object is in place.
	AppliedReason = "Applied"
	// ApplyFailedReason: some objects could not be applied; the message names them.
	ApplyFailedReason = "ApplyFailed"
	// ConflictReason: another MultiClusterService with higher priority owns some objects.
	ConflictReason = "Conflict"
	// DryRunReason: DryRun mode; nothing is changed.
	DryRunReason = "DryRun"
	// ProgressingReason: a deployment is under way.
	ProgressingReason = "Progressing"
	// OneTimeDoneReason: OneTime mode, and the services were deployed once; they are left alone.
	OneTimeDoneReason = "OneTimeDone"
	// NoMatchingClustersReason: the selector matches no Cluster.
	NoMatchingClustersReason = "NoMatchingClusters"
	// ClustersNotReadyReason: some matching clusters are not Ready.
	ClustersNotReadyReason = "ClustersNotReady"
	// StatusNameTakenReason: the status object a matching Cluster needs has the name of another
	// service set's (status objects are named "<service set>.<cluster>", and both names may hold
	// dots); the message names that service set and Cluster, and what to rename.
	StatusNameTakenReason = "StatusNameTaken"
	// ClustersReadyReason: every matching cluster is Ready.
	ClustersReadyReason = "ClustersReady"
	// InventoryIncompleteReason: a ClusterServiceInventory shard the status object names is
	// missing or not its own; nothing is applied, pruned or withdrawn until it is back (the
	// message says how to recover).
	InventoryIncompleteReason = "InventoryIncomplete"
	// DeletingReason: the object is being deleted and its services withdrawn.
	DeletingReason = "Deleting"
	// AwaitingApprovalReason: the service set's new revision waits for approval
	// (spec.rollout.approval Manual); on a status object, only that revision selects its
	// Cluster (a changed cluster selector, spec.held): nothing is deployed there until it is
	// approved, and the cluster previews it.
	AwaitingApprovalReason = "AwaitingApproval"
	// NotSelectedReason: the MultiClusterService does not select the status object's Cluster
	// (its labels, or the tenancy policy: see package tenancy); nothing is deployed.
	NotSelectedReason = "NotSelected"
	// CrossNamespaceReferenceReason: a ServiceSet, or a service set on a hub shared with
	// tenants, names a Cluster namespace, template or Secret it may not use; the message names it.
	CrossNamespaceReferenceReason = "CrossNamespaceReference"
)

// InvalidSelectorReason: spec.clusterSelector cannot be parsed.
const InvalidSelectorReason = "InvalidSelector"

// ServiceTemplate condition type and reason.
const (
	// SourceAvailableCondition is True when everything the template reads can be read: its
	// ConfigMaps and Secrets exist, its chart and version can be fetched, plain inline manifests
	// parse. Cluster-dependent rendering is checked per cluster, in ClusterServiceStatus.
	SourceAvailableCondition = "SourceAvailable"
	// SourceAvailableReason: the source is available.
	SourceAvailableReason = "SourceAvailable"
)

// ClusterServiceStatus drift condition types and reasons.
const (
	// DriftedCondition is True while objects on the cluster differ from the declaration and
	// are not being corrected now (action Report outside a correction window, Contested). It is
	// False with reason InSync otherwise.
	DriftedCondition = "Drifted"
	// ContestedCondition is True while objects another field manager keeps reverting are
	// Contested: corrected with an exponential backoff, or, with the fight action Stop, not
	// corrected until a manual request (holdfast.dev/reconcile-requested-at). The message names
	// the objects and the managers.
	ContestedCondition = "Contested"

	// InSyncReason: the cluster holds what is declared (as far as drift handling looks).
	InSyncReason = "InSync"
	// DriftReportedReason: drift was found and, by policy, waits for a manual correction.
	DriftReportedReason = "DriftReported"
	// CorrectionFailedReason: Holdfast tried to put drifted objects back and the API server
	// refused; the message names the objects and its reasons. Corrections are retried.
	CorrectionFailedReason = "CorrectionFailed"
	// ContestedReason: another field manager keeps reverting Holdfast's corrections.
	ContestedReason = "Contested"
	// NotContestedReason: no object is contested.
	NotContestedReason = "NotContested"
	// DriftDetectionOffReason: the sync mode does not watch for drift.
	DriftDetectionOffReason = "DriftDetectionOff"
	// InvalidDriftPolicyReason: the drift policy cannot be used (a bad ignore path, window or
	// notification target); the message says what to fix.
	InvalidDriftPolicyReason = "InvalidDriftPolicy"
)

// NeedsAttention reports whether a ClusterServiceStatus's Ready reason is a failure that needs
// a human, as opposed to a wait that ends by itself.
func NeedsAttention(reason string) bool {
	switch reason {
	case ProgressingReason, ProbingReason, ClusterNotReadyReason, ClusterPausedReason, PausedReason,
		DryRunReason, DeletingReason, WaitingForDependenciesReason, RollingOutReason:
		return false
	}
	return true
}

// The Attribution condition of a ClusterServiceStatus, set only while its service set's
// drift.attribution is Auto. It does not feed Ready: without attribution drift is handled as
// before, naming the field manager only.
const (
	// AttributionCondition is True while the target runs Holdfast's attribution policy for the
	// service set, False when the target cannot (no MutatingAdmissionPolicy API), Unknown while
	// Holdfast's identity on the target is not known yet.
	AttributionCondition = "Attribution"
	// AttributionActiveReason: the policy and binding are applied on the target.
	AttributionActiveReason = "AttributionActive"
	// AttributionUnsupportedReason: the target does not serve admissionregistration.k8s.io/v1
	// mutatingadmissionpolicies (Kubernetes before 1.36, or the API switched off); drift names
	// the field manager only there.
	AttributionUnsupportedReason = "AttributionUnsupported"
	// AttributionPendingReason: Holdfast has not learnt its identity or the target's APIs yet,
	// or the policy is not applied yet.
	AttributionPendingReason = "AttributionPending"

	// PreventionCondition, on a ClusterServiceStatus while its service set (or one of its
	// services) has drift.prevention Warn or Deny, is True while the target runs Holdfast's
	// ValidatingAdmissionPolicy for it.
	PreventionCondition = "Prevention"
	// PreventionActiveReason: the policies and bindings are applied on the target.
	PreventionActiveReason = "PreventionActive"
	// PreventionUnsupportedReason: the target does not serve admissionregistration.k8s.io/v1
	// validatingadmissionpolicies (Kubernetes 1.30 or later); drift is corrected as before.
	PreventionUnsupportedReason = "PreventionUnsupported"
	// PreventionPendingReason: Holdfast has not learnt its identity or the target's APIs yet,
	// or the policies are not applied yet.
	PreventionPendingReason = "PreventionPending"
)

// Reasons of an AlertRule's Ready condition.
const (
	// TargetInvalidReason: a target's Secret is missing, lacks a key its type needs, or holds a
	// value that is not usable; the message names the target, Secret and key, never a value.
	TargetInvalidReason = "TargetInvalid"
	// ExclusionInvalidReason: an exclusion is not a valid regular expression (RE2).
	ExclusionInvalidReason = "ExclusionInvalid"
	// SelectorInvalidReason: spec.serviceSetSelector is not a valid label selector.
	SelectorInvalidReason = "SelectorInvalid"
	// SuspendedReason: the rule is suspended (spec.suspend) and sends nothing.
	SuspendedReason = "Suspended"
)

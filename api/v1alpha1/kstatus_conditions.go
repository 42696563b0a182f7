package v1alpha1

// The kstatus conditions (sigs.k8s.io/cli-utils kstatus, as kubectl wait, Flux and Argo CD read
// status): abnormal-true, set next to Ready by the controllers.
const (
	// ReconcilingCondition is True while the object is not Ready yet and may get there without
	// anyone changing anything (kstatus: InProgress).
	ReconcilingCondition = "Reconciling"
	// StalledCondition is True while the object cannot become Ready until someone changes
	// something — the declaration, a referenced object, the cluster's credentials — as Ready's
	// reason says (kstatus: Failed).
	StalledCondition = "Stalled"
)

// HeldReasons are the Ready reasons of an object held as it is on purpose (paused, dry run):
// neither progressing nor stalled.
var HeldReasons = map[string]bool{
	PausedReason:        true,
	ClusterPausedReason: true,
	DryRunReason:        true,
}

// StalledReasons are the Ready reasons that need a change by someone to clear: declaration
// errors, missing or unusable referenced objects, refusals. Every other reason for not being
// Ready is progress or a transient fault, retried on its own.
var StalledReasons = map[string]bool{
	SecretNotFoundReason:          true,
	SecretKeyNotFoundReason:       true,
	InvalidKubeconfigReason:       true,
	NoCurrentContextReason:        true,
	CredentialsRejectedReason:     true,
	ClusterNotFoundReason:         true,
	RenderFailedReason:            true,
	TemplateNotFoundReason:        true,
	SourceNotFoundReason:          true,
	ConflictReason:                true,
	InvalidSelectorReason:         true,
	CrossNamespaceReferenceReason: true,
	NotSelectedReason:             true,
	InvalidDriftPolicyReason:      true,
	CorrectionFailedReason:        true,
	InvalidDependencyReason:       true,
	UnhealthyReason:               true,
	HealthTimeoutReason:           true,
	InvalidHealthCheckReason:      true,
	RolloutHaltedReason:           true,
	RolloutAbortedReason:          true,
	RevisionFailedReason:          true,
	RevisionRefusedReason:         true,
	ArtifactSourceNotFoundReason:  true,
}

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
)

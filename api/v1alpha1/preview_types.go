package v1alpha1

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApprovalPolicy says whether a new revision of a service set's services waits for a human.
// +kubebuilder:validation:Enum=Automatic;Manual
type ApprovalPolicy string

const (
	// ApprovalAutomatic rolls a new revision out at once (the default).
	ApprovalAutomatic ApprovalPolicy = "Automatic"
	// ApprovalManual previews a new revision on every matching cluster (a server-side dry run of
	// what it would apply and prune there, diffed against what is live) and holds it, phase
	// Previewing then Previewed, until `holdfast rollout approve` approves that revision. The
	// clusters keep what they have meanwhile; a cluster that joins gets the stable revision.
	ApprovalManual ApprovalPolicy = "Manual"
)

// RolloutApproveAnnotation on a MultiClusterService approves the revision it names (`holdfast
// rollout approve` writes it): a previewed revision held by approval Manual then rolls out. An
// approval of another revision approves nothing; a revision that changes after its approval
// needs a new one.
const RolloutApproveAnnotation = "holdfast.dev/rollout-approve"

// ApproveValue is the value of RolloutApproveAnnotation that approves revision: the revision,
// then the time, so that each approval is new.
func ApproveValue(revision string, now time.Time) string {
	return revision + " " + now.UTC().Format(time.RFC3339Nano)
}

// RevisionOf is the revision an approval value or a preview request names: its first field.
func RevisionOf(value string) string {
	if f := strings.Fields(value); len(f) > 0 {
		return f[0]
	}
	return ""
}

// PreviewRequest is what a rollout holding its revision for approval asks every cluster to
// preview: the revision, then when the hold began, so that a preview of the same revision made
// for an earlier hold is not taken for this one; "" when it holds none.
func PreviewRequest(ro *RolloutStatus) string {
	if ro == nil || !ro.Phase.AwaitsApproval() || ro.StartTime == nil {
		return ""
	}
	return ro.Revision + " " + ro.StartTime.UTC().Format(time.RFC3339)
}

// AwaitsApproval reports whether a rollout in phase p holds its revision for approval.
func (p RolloutPhase) AwaitsApproval() bool {
	return p == RolloutPreviewing || p == RolloutPreviewed
}

// RolloutApprovedByAnnotation is stamped by the hub's admission policy (ApprovalPolicyName),
// whenever RolloutApproveAnnotation is set or changed, with the user who made the request;
// whatever a client writes there itself is overwritten the same way. status.rollout.approval
// records it.
const RolloutApprovedByAnnotation = "holdfast.dev/rollout-approved-by"

// ApprovalPolicyName is the hub's MutatingAdmissionPolicy (and its binding) that stamps
// RolloutApprovedByAnnotation. Without it an approval is recorded with its approver marked
// unverified.
const ApprovalPolicyName = "holdfast-rollout-approvals"

// PreviewOutcome is what a preview found on a cluster.
// +kubebuilder:validation:Enum=NoChange;Changes;Refused;Failed;Unsupported
type PreviewOutcome string

const (
	// PreviewNoChange: applying the revision would change nothing.
	PreviewNoChange PreviewOutcome = "NoChange"
	// PreviewChanges: applying the revision would create, update or delete objects.
	PreviewChanges PreviewOutcome = "Changes"
	// PreviewRefused: the cluster's API server refused at least one object in the dry run
	// (admission, quota, validation, an immutable field), or the revision could not be
	// rendered for the cluster.
	PreviewRefused PreviewOutcome = "Refused"
	// PreviewFailed: the preview could not be made (the cluster unreachable, the revision
	// unreadable); it is tried again.
	PreviewFailed PreviewOutcome = "Failed"
	// PreviewUnsupported: the cluster cannot be previewed (a Pull cluster: its agent does not
	// preview yet).
	PreviewUnsupported PreviewOutcome = "Unsupported"
)

// PreviewAction is what applying a revision would do to one object.
// +kubebuilder:validation:Enum=Create;Update;Delete;Refused
type PreviewAction string

const (
	PreviewCreate PreviewAction = "Create"
	PreviewUpdate PreviewAction = "Update"
	PreviewDelete PreviewAction = "Delete"
	PreviewRefuse PreviewAction = "Refused"
)

// PreviewChange is one object a revision would change on a cluster.
type PreviewChange struct {
	// Service is the service that declares (or declared) the object.
	// +optional
	Service string `json:"service,omitempty"`
	// Object is "group/version Kind namespace/name" (or without the namespace).
	Object string `json:"object"`
	// Action is what would happen to it.
	Action PreviewAction `json:"action"`
	// Diff lists the fields that would change, "path: old -> new" (a creation: the object, each
	// line prefixed "+ "), with Secret values masked; for Refused, the API server's reason.
	// Long diffs are cut short, saying how many lines were left out.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Diff []string `json:"diff,omitempty"`
}

// ClusterPreview is the preview of a revision on one cluster.
type ClusterPreview struct {
	// Revision previewed.
	Revision string `json:"revision"`
	// Request is the preview request it answers (PreviewRequest).
	Request string `json:"request"`
	// Outcome is what the preview found.
	Outcome PreviewOutcome `json:"outcome"`
	// Message says why a preview was Refused, Failed or Unsupported.
	// +optional
	Message string `json:"message,omitempty"`
	// Digest identifies the changes: clusters whose previews have the same digest would see
	// the same changes (the service set's summary groups them by it).
	// +optional
	Digest string `json:"digest,omitempty"`
	// Time is when the preview was made.
	Time metav1.Time `json:"time"`
	// Changes are the objects that would change, at most MaxPreviewChanges; Omitted counts those
	// left out.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Changes []PreviewChange `json:"changes,omitempty"`
	// +optional
	Omitted int32 `json:"omitted,omitempty"`
}

// MaxPreviewChanges bounds status.preview.changes of a ClusterServiceStatus.
const MaxPreviewChanges = 256

// PreviewGroup is the clusters whose previews found the same changes.
type PreviewGroup struct {
	// Digest is the previews' digest.
	Digest string `json:"digest"`
	// Selection says the group's clusters are newly selected by the revision's cluster
	// selector (Joining) or no longer selected (Leaving); empty for clusters it keeps.
	// +optional
	Selection PreviewSelection `json:"selection,omitempty"`
	// Outcome is theirs.
	Outcome PreviewOutcome `json:"outcome"`
	// Clusters counts the clusters; Examples names a few (namespace/name).
	Clusters int32 `json:"clusters"`
	// +kubebuilder:validation:MaxItems=5
	// +listType=atomic
	// +optional
	Examples []string `json:"examples,omitempty"`
	// Message is the first cluster's message (a refusal's reason).
	// +optional
	Message string `json:"message,omitempty"`
	// Changes are the changes, shortened: at most a few objects and a few diff lines each;
	// OmittedChanges counts the objects left out (`holdfast diff --cluster` shows them all).
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Changes []PreviewChange `json:"changes,omitempty"`
	// +optional
	OmittedChanges int32 `json:"omittedChanges,omitempty"`
}

// PreviewSelection is how a changed cluster selector moves a group of clusters.
// +kubebuilder:validation:Enum=Joining;Leaving
type PreviewSelection string

const (
	// PreviewJoining: only the previewed revision's cluster selector selects the clusters.
	PreviewJoining PreviewSelection = "Joining"
	// PreviewLeaving: the previewed revision's cluster selector no longer selects them.
	PreviewLeaving PreviewSelection = "Leaving"
)

// RolloutPreview summarises the preview of a revision over the matching clusters, bounded
// whatever the size of the fleet: at most MaxPreviewGroups groups of clusters with the same
// changes, the largest first.
type RolloutPreview struct {
	// Revision previewed.
	Revision string `json:"revision"`
	// Clusters counts the matching clusters; Previewed those whose preview of Revision is
	// recorded; NoChange, Changed, Refused, Failed and Unsupported count them by outcome.
	Clusters  int32 `json:"clusters"`
	Previewed int32 `json:"previewed"`
	// +optional
	NoChange int32 `json:"noChange,omitempty"`
	// +optional
	Changed int32 `json:"changed,omitempty"`
	// +optional
	Refused int32 `json:"refused,omitempty"`
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// +optional
	Unsupported int32 `json:"unsupported,omitempty"`
	// Joining counts the clusters only the revision's cluster selector selects (they gain the
	// services), Leaving those it no longer selects (they lose them); both are among Clusters.
	// +optional
	Joining int32 `json:"joining,omitempty"`
	// +optional
	Leaving int32 `json:"leaving,omitempty"`
	// Groups are the clusters grouped by identical changes and selection, largest first
	// (clusters the selector keeps where nothing would change are counted, not grouped);
	// OmittedGroups counts the groups left out.
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	Groups []PreviewGroup `json:"groups,omitempty"`
	// +optional
	OmittedGroups int32 `json:"omittedGroups,omitempty"`
	// Digest identifies the preview as a whole (every cluster's digest): an approval records
	// the one it approved.
	// +optional
	Digest string `json:"digest,omitempty"`
}

// MaxPreviewGroups bounds status.rollout.preview.groups.
const MaxPreviewGroups = 10

// RolloutApproval records the approval of a revision.
type RolloutApproval struct {
	// Revision approved.
	Revision string `json:"revision"`
	// By is the user who approved it, as the hub's admission policy stamped it; Verified is
	// false when that policy was not in force (By is then what the client wrote).
	By       string `json:"by"`
	Verified bool   `json:"verified"`
	// Time is when the approval was handled.
	Time metav1.Time `json:"time"`
	// PreviewDigest is the digest of the preview as it was when approved; PreviewComplete
	// whether every matching cluster had been previewed.
	// +optional
	PreviewDigest string `json:"previewDigest,omitempty"`
	// +optional
	PreviewComplete bool `json:"previewComplete,omitempty"`
}

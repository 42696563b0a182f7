package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// PayloadVersion is the "version" of the JSON event. It changes when a field changes meaning or
// is removed; receivers should ignore fields they do not know, as new ones may be added.
const PayloadVersion = "holdfast.dev/v1alpha1"

// EventType says what happened.
type EventType string

const (
	// DriftDetected: a managed object was changed or deleted by someone else.
	DriftDetected EventType = "DriftDetected"
	// DriftCorrected: Holdfast put a drifted object back.
	DriftCorrected EventType = "DriftCorrected"
	// Contested: another field manager kept reverting Holdfast's corrections; Holdfast corrects
	// the object with a backoff from now on (or, with fight action Stop, stopped correcting it).
	Contested EventType = "Contested"
	// Resumed: Holdfast corrects a Contested object again, after a manual request.
	Resumed EventType = "Resumed"
	// CorrectionFailed: Holdfast tried to put a drifted object back and the API server refused
	// (Message gives its reason); the drift stays open and the correction is retried.
	CorrectionFailed EventType = "CorrectionFailed"
	// RolloutHalted: the rollout of a service set's new revision reached its failure threshold
	// (spec.rollout.failureThreshold); Rollout names the clusters that failed and why. It is
	// about the service set: Cluster and Object are empty.
	RolloutHalted EventType = "RolloutHalted"
	// RolloutProgressing: a service set's new revision started rolling out. It is about the
	// service set: Cluster and Object are empty.
	RolloutProgressing EventType = "RolloutProgressing"
	// RolloutComplete: every wave of a service set's new revision is done and its clusters
	// are ready. It is about the service set: Cluster and Object are empty.
	RolloutComplete EventType = "RolloutComplete"
	// ClusterUnreachable: the hub lost a Cluster (Connected False), or a Pull cluster's agent
	// stopped reporting. Object is empty; Message gives the reason.
	ClusterUnreachable EventType = "ClusterUnreachable"
	// Unhealthy: a service set's objects on a cluster are deployed but not healthy (the
	// cluster's status object Ready False, reason Unhealthy). Object is empty; Message says which.
	Unhealthy EventType = "Unhealthy"
)

// EventTypes are every EventType, in the order docs/notifications.md lists them.
var EventTypes = []EventType{DriftDetected, DriftCorrected, Contested, Resumed, CorrectionFailed,
	RolloutProgressing, RolloutHalted, RolloutComplete, ClusterUnreachable, Unhealthy}

// RolloutDetail is the rollout a RolloutHalted event is about.
type RolloutDetail struct {
	// Revision is the revision that halted; StableRevision the one abort goes back to.
	Revision, StableRevision string
	// Wave names the wave it halted at.
	Wave string
	// Failed are the clusters that failed with it.
	Failed []holdfastv1.RolloutFailure
}

// Event is one drift event on one object. It marshals to the JSON shape documented in
// docs/notifications.md.
type Event struct {
	Type EventType
	// Time is when the event happened; Send sets it to the current time when zero.
	Time time.Time
	// MultiClusterService is the service set that declares the object.
	MultiClusterService string
	// Cluster is the Cluster the object is on.
	Cluster types.NamespacedName
	// Service is the service of the set that declares the object.
	Service string
	// Object is the object that drifted.
	Object holdfastv1.ResourceRef
	// Drift says what changed and who changed it; nil when unknown.
	Drift *holdfastv1.DriftDetail
	// CorrectedTime is when Holdfast put the object back; nil while it is not.
	CorrectedTime *time.Time
	// Message is a human-readable note, e.g. why an object became Contested.
	Message string
	// Rollout is set on the rollout events (RolloutProgressing, RolloutHalted, RolloutComplete).
	Rollout *RolloutDetail
	// Commit is the Git commit (hex SHA-1 or SHA-256) the rollout's revision was rendered from,
	// for the commit status types; empty when its templates have no Git source.
	Commit string
	// Summary is the AlertRule's summary line (spec.summary) for events it sends; empty for
	// a service set's own targets.
	Summary string
}

// payload is the JSON shape of an Event. It is spelled out here, rather than derived from the
// API types, so that the receivers' contract only changes on purpose.
type payload struct {
	Version             string                 `json:"version"`
	ID                  string                 `json:"id"`
	Type                EventType              `json:"type"`
	Time                time.Time              `json:"time"`
	MultiClusterService string                 `json:"multiClusterService"`
	Cluster             clusterRef             `json:"cluster"`
	Service             string                 `json:"service,omitempty"`
	Object              holdfastv1.ResourceRef `json:"object"`
	Drift               *driftPayload          `json:"drift,omitempty"`
	CorrectedTime       *time.Time             `json:"correctedTime,omitempty"`
	Message             string                 `json:"message,omitempty"`
	Rollout             *rolloutPayload        `json:"rollout,omitempty"`
	Summary             string                 `json:"summary,omitempty"`
	Commit              string                 `json:"commit,omitempty"`
	Severity            Severity               `json:"severity"`
}

type rolloutPayload struct {
	Revision       string          `json:"revision"`
	StableRevision string          `json:"stableRevision,omitempty"`
	Wave           string          `json:"wave,omitempty"`
	FailedClusters []failedCluster `json:"failedClusters"`
}

type failedCluster struct {
	Cluster string `json:"cluster"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

type clusterRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

type driftPayload struct {
	Type         holdfastv1.DriftType     `json:"type"`
	Fields       []holdfastv1.FieldChange `json:"fields,omitempty"`
	Manager      string                   `json:"manager,omitempty"`
	Operation    string                   `json:"operation,omitempty"`
	Subresource  string                   `json:"subresource,omitempty"`
	User         string                   `json:"user,omitempty"`
	DetectedTime *time.Time               `json:"detectedTime,omitempty"`
	Detection    string                   `json:"detection"`
}

// MarshalJSON encodes e in the documented shape, with its version and ID. It does not redact:
// Send does that before an event is queued.
func (e Event) MarshalJSON() ([]byte, error) {
	p := payload{
		Version:             PayloadVersion,
		ID:                  e.ID(),
		Type:                e.Type,
		Time:                e.Time.UTC(),
		MultiClusterService: e.MultiClusterService,
		Cluster:             clusterRef{Namespace: e.Cluster.Namespace, Name: e.Cluster.Name},
		Service:             e.Service,
		Object:              e.Object,
		Message:             e.Message,
		Summary:             e.Summary,
		Commit:              e.Commit,
		Severity:            e.Severity(),
	}
	if e.CorrectedTime != nil {
		t := e.CorrectedTime.UTC()
		p.CorrectedTime = &t
	}
	if ro := e.Rollout; ro != nil {
		p.Rollout = &rolloutPayload{Revision: ro.Revision, StableRevision: ro.StableRevision, Wave: ro.Wave, FailedClusters: []failedCluster{}}
		for _, f := range ro.Failed {
			p.Rollout.FailedClusters = append(p.Rollout.FailedClusters, failedCluster{Cluster: f.Cluster, Reason: f.Reason, Message: f.Message})
		}
	}
	if d := e.Drift; d != nil {
		p.Drift = &driftPayload{
			Type:        d.Type,
			Fields:      d.Fields,
			Manager:     d.Manager,
			Operation:   d.Operation,
			Subresource: d.Subresource,
			User:        d.User,
			Detection:   string(d.Detection),
		}
		if p.Drift.Detection == "" {
			p.Drift.Detection = string(holdfastv1.DriftDetectedByWatch)
		}
		if !d.DetectedTime.IsZero() {
			t := d.DetectedTime.UTC()
			p.Drift.DetectedTime = &t
		}
	}
	return encodeJSON(p)
}

// ID identifies the event for receivers that deduplicate: a retried delivery carries the same ID.
// It is derived from what the event is about and when, not from its delivery.
func (e Event) ID() string {
	parts := []string{
		string(e.Type), e.Time.UTC().Format(time.RFC3339Nano), e.MultiClusterService, e.Cluster.String(),
		e.Service, e.Object.Group, e.Object.Kind, e.Object.Namespace, e.Object.Name,
	}
	if e.Drift != nil {
		parts = append(parts, e.Drift.DetectedTime.UTC().Format(time.RFC3339Nano))
	}
	if e.Rollout != nil {
		parts = append(parts, e.Rollout.Revision)
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// deepCopy returns e sharing no memory with the caller's, so that the caller may reuse its
// values while the event waits in a queue.
func (e Event) deepCopy() Event {
	if e.Drift != nil {
		e.Drift = e.Drift.DeepCopy()
	}
	if e.CorrectedTime != nil {
		t := *e.CorrectedTime
		e.CorrectedTime = &t
	}
	return e
}

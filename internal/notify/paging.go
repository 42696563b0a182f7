package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Receivers that page (PagerDuty, Opsgenie, Alertmanager) keep a problem open until told it
// ended. A problem is the drift of one object, the halted rollout of a service set, a lost
// cluster, or a service set's unhealthy objects on a cluster; the events of one problem share
// its key, so that the receiver folds them into one incident and the event that ends it
// resolves that incident.

// problemKind names the problem an event type is part of.
func problemKind(t EventType) string {
	switch t {
	case DriftDetected, DriftCorrected, Contested, Resumed, CorrectionFailed:
		return "drift"
	case RolloutProgressing, RolloutHalted, RolloutComplete:
		return "rollout"
	}
	return string(t)
}

// problemKey identifies the problem e is part of: the same for the events that open and end it,
// whatever their type and time. It is a hash, so that it fits every receiver's limit (PagerDuty's
// dedup_key, Opsgenie's alias).
func problemKey(e Event) string {
	o := e.Object
	parts := []string{problemKind(e.Type), e.MultiClusterService, e.Cluster.String(), o.Group, o.Kind, o.Namespace, o.Name}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "holdfast-" + hex.EncodeToString(sum[:16])
}

// resolvedBy maps each event type that ends a problem to the types that open it: a drift is
// over when its object is corrected, a halted rollout when it completes. Lost clusters and
// unhealthy objects have no such event yet: their incidents are resolved by a person.
var resolvedBy = map[EventType][]EventType{
	DriftCorrected:  {DriftDetected, Contested, CorrectionFailed, Resumed},
	RolloutComplete: {RolloutHalted},
}

// resolves reports whether e ends its problem.
func resolves(e Event) bool {
	_, ok := resolvedBy[e.Type]
	return ok
}

// problemSource names where e happened, for an incident's source: the cluster, or the service set
// for a rollout.
func problemSource(e Event) string {
	if e.Cluster.Name != "" {
		return "cluster " + e.Cluster.String()
	}
	return "service set " + e.MultiClusterService
}

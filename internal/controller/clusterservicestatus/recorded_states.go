package clusterservicestatus

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/notify"
)

// A Pull cluster's agent also leaves objects Contested (another manager keeps reverting its
// corrections) or Uncorrectable (the API server refused the correction) in the inventory it
// writes. The hub notifies of each once, as the Push reconcile does when an object enters one of
// those states with a new drift (newlyIn): it keeps, in NotifiedStatesAnnotation, a short digest
// of each object it reported in such a state with its drift, and notifies of those not there.
// An object that leaves the state drops out of the annotation, so that entering it again is
// reported again.

// NotifiedStatesAnnotation, on a Pull cluster's status object, lists the digests (stateDigest)
// of the objects the hub reported Contested or CorrectionFailed, comma-separated.
const NotifiedStatesAnnotation = "holdfast.dev/notified-states"

// maxNotifiedStates bounds the digests kept (13 bytes each): an inventory with more objects in
// those states at once is reported for the first ones, and its others once the first leave.
const maxNotifiedStates = 1000

// notifiedStates maps the states the hub reports from a Pull cluster's inventory to their
// events.
var notifiedStates = map[holdfastv1.ResourceState]notify.EventType{
	holdfastv1.ResourceContested:     notify.Contested,
	holdfastv1.ResourceUncorrectable: notify.CorrectionFailed,
}

// stateEvents are the events of the objects of resources (css's inventory) in a notified state
// whose digest is not in reported (the annotation's value), and the annotation's new value: the
// digests of every object in such a state now.
func stateEvents(css *holdfastv1.ClusterServiceStatus, resources []holdfastv1.ResourceStatus, reported string, now time.Time) ([]driftEvent, string) {
	before := map[string]bool{}
	for d := range strings.SplitSeq(reported, ",") {
		before[d] = true
	}
	base := notify.Event{Time: now, MultiClusterService: css.Spec.MultiClusterService,
		Cluster: types.NamespacedName{Namespace: css.Namespace, Name: css.Spec.Cluster}}
	var (
		out     []driftEvent
		current []string
	)
	for i := range resources {
		rs := &resources[i]
		typ, ok := notifiedStates[rs.State]
		if !ok || len(current) == maxNotifiedStates {
			continue
		}
		d := stateDigest(rs)
		current = append(current, d)
		if before[d] {
			continue
		}
		e := base
		e.Type, e.Service, e.Object, e.Drift, e.Message = typ, rs.Service, rs.ResourceRef, rs.LastDrift, rs.Message
		out = append(out, driftEvent{Event: e})
	}
	slices.Sort(current)
	return out, strings.Join(current, ",")
}

// stateDigest names an object in a state with its last drift: 12 hex digits of their SHA-256.
func stateDigest(rs *holdfastv1.ResourceStatus) string {
	var detected string
	if rs.LastDrift != nil {
		detected = rs.LastDrift.DetectedTime.UTC().Format(time.RFC3339Nano)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%s\x00%s\x00%s\x00%s", rs.State, rs.Group, rs.Kind, rs.Namespace, rs.Name, detected))
	return hex.EncodeToString(sum[:6])
}

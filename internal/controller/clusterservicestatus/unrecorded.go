package clusterservicestatus

import (
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// The records of drifts put back whose status patch could not be written (a Pull cluster's hub
// away) wait in memory until a patch writes them (memory.keepUnrecorded). A restart would lose
// them: the agent, which corrects for as long as the hub is away and may be restarted meanwhile,
// gives the reconciler an UnrecordedStore, which keeps them outside the process (on the agent's
// own cluster) and gives them back at the next start, when the first patch of each status
// object writes them.

// UnrecordedStore keeps, outside the process, the drift records waiting in memory for a status
// patch.
type UnrecordedStore interface {
	// Keep keeps records as those waiting for the status object key of cluster; none forgets
	// them.
	Keep(key types.NamespacedName, cluster string, records []holdfastv1.DriftRecord)
	// Kept returns what was kept when the process started, per status object.
	Kept() map[types.NamespacedName]UnrecordedRecords
}

// UnrecordedRecords are the records waiting for one status object, newest first, and its
// cluster.
type UnrecordedRecords struct {
	Cluster string                   `json:"cluster"`
	Records []holdfastv1.DriftRecord `json:"records"`
}

// restoreUnrecorded takes back what the store kept and has it keep every change from then on.
func (r *Reconciler) restoreUnrecorded() {
	if r.Unrecorded == nil {
		return
	}
	for key, u := range r.Unrecorded.Kept() {
		r.memory.keepUnrecorded(key, u.Cluster, u.Records)
	}
	r.memory.unrecordedChanged = r.Unrecorded.Keep
}

package agent

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller/clusterservicestatus"
)

// Kept also keeps the drift records waiting for the hub (clusterservicestatus.UnrecordedStore):
// the records of what the agent put back while the hub was away, which a status patch writes
// once it is back. Saved with the rest on the agent's cluster, they survive the agent's restart
// during the outage; the next agent takes them back at start and its first status patch of each
// status object writes them.

var _ clusterservicestatus.UnrecordedStore = (*Kept)(nil)

// unrecordedPrefix starts the keys of the records kept, "unrecorded:<namespace>/<name>": never
// the path of a read, so never an answer.
const unrecordedPrefix = "unrecorded:"

// Keep implements clusterservicestatus.UnrecordedStore.
func (k *Kept) Keep(key types.NamespacedName, cluster string, records []holdfastv1.DriftRecord) {
	entryKey := unrecordedPrefix + key.String()
	if len(records) == 0 {
		k.mu.Lock()
		defer k.mu.Unlock()
		if _, ok := k.entries[entryKey]; ok {
			delete(k.entries, entryKey)
			k.dirty[entryKey] = true
		}
		return
	}
	body, err := json.Marshal(clusterservicestatus.UnrecordedRecords{Cluster: cluster, Records: records})
	if err != nil {
		k.log.Error(err, "Keeping the drift records waiting for the hub failed", "statusObject", key)
		return
	}
	k.keep(entryKey, keptEntry{ContentType: "application/json", Body: body})
}

// Kept implements clusterservicestatus.UnrecordedStore: the records kept, as loaded at start
// and changed since.
func (k *Kept) Kept() map[types.NamespacedName]clusterservicestatus.UnrecordedRecords {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[types.NamespacedName]clusterservicestatus.UnrecordedRecords{}
	for entryKey, e := range k.entries {
		name, ok := strings.CutPrefix(entryKey, unrecordedPrefix)
		if !ok {
			continue
		}
		namespace, name, ok := strings.Cut(name, "/")
		var u clusterservicestatus.UnrecordedRecords
		if !ok || namespace != k.Namespace || json.Unmarshal(e.Body, &u) != nil || len(u.Records) == 0 {
			// Not this agent's namespace (a Cluster moved), or unreadable: nothing to write.
			continue
		}
		out[types.NamespacedName{Namespace: namespace, Name: name}] = u
	}
	return out
}

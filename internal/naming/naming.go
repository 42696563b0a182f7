package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// maxLabelValue is the longest label value Kubernetes accepts.
const maxLabelValue = 63

// maxName is the longest object name (a DNS subdomain).
const maxName = 253

// LabelValue returns name when it fits in a label value, or a prefix of it followed by a hash
// of the whole, so distinct names stay distinct.
func LabelValue(name string) string { return shorten(name, maxLabelValue) }

// StatusName names the ClusterServiceStatus of a MultiClusterService on a Cluster:
// "<service set>.<cluster>", shortened with a hash when too long. Both names may hold dots, so two
// pairs can meet ("a.b" on "c", "a" on "b.c"); the names are kept as they are, since renaming
// would withdraw and redeploy every ServiceSet's services on upgrade ("<namespace>.<name>" has a
// dot), and the MultiClusterService controller reports a name taken (StatusNameTaken) instead.
func StatusName(serviceSet, cluster string) string {
	return shorten(serviceSet+"."+cluster, maxName)
}

// RenderingsName names the Secret on the hub that keeps the renderings of a ClusterServiceStatus
// (see package rendercache): "<status name>-render", shortened with a hash when too long.
func RenderingsName(statusName string) string { return shorten(statusName+"-render", maxName) }

// InventoryName names shard shard of shards of the inventory of a ClusterServiceStatus (see
// package inventory): "<status name>-inventory-<shards>-<shard>", shortened with a hash when too
// long. The number of shards is in the name so that a new layout never overwrites the shards the
// status object still names.
func InventoryName(statusName string, shards, shard int) string {
	return shorten(fmt.Sprintf("%s-inventory-%d-%d", statusName, shards, shard), maxName)
}

// Shorten returns s when it fits in an object name, or a prefix of it followed by a hash of the
// whole, so distinct names stay distinct.
func Shorten(s string) string { return shorten(s, maxName) }

func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:])[:16]
	prefix := s[:max-len(h)-1]
	// Label values and names must end with an alphanumeric character before the hash's dash.
	for len(prefix) > 0 && !alnum(prefix[len(prefix)-1]) {
		prefix = prefix[:len(prefix)-1]
	}
	return prefix + "-" + h
}

func alnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// RevisionName names a revision of a service set (see package rollout):
// "<service set>-<digest>", the service set's name shortened with a hash when too long.
func RevisionName(serviceSet, digest string) string {
	return shorten(serviceSet, maxName-len(digest)-1) + "-" + digest
}

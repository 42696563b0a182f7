package inventory

import (
	"hash/fnv"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// DefaultShardSize is how many entries a status object holds inline, and about how many each
// shard holds: about 300 KiB of small entries, a fifth of what an object may hold.
const DefaultShardSize = 1000

// maxInlineBytes and maxShardBytes bound the JSON of the entries in a status object and in a
// shard, whatever their number: an entry with a drift record of many long fields is much larger
// than an InSync one. Well below the API server's 1.5 MiB, leaving room for the rest.
const (
	maxInlineBytes = 512 << 10
	maxShardBytes  = 768 << 10
)

// Layout returns how many shards hold entries given the number in use now (0: inline) and the
// shard size (DefaultShardSize when not positive); 0 keeps them inline. See the package
// documentation for the rules.
func Layout(entries []holdfastv1.ResourceStatus, current, size int) int {
	if size <= 0 {
		size = DefaultShardSize
	}
	n := len(entries)
	if (n <= size && current == 0 || n <= size/2) && jsonSize(entries) <= maxInlineBytes {
		return 0
	}
	shards := max(current, 1)
	for shards*size < n && shards < holdfastv1.MaxInventoryShards {
		shards *= 2
	}
	for shards < holdfastv1.MaxInventoryShards && largest(Split(entries, shards)) > maxShardBytes {
		shards *= 2
	}
	return min(shards, holdfastv1.MaxInventoryShards)
}

// ShardOf returns the shard, of shards, that holds the entry of the object ref.
func ShardOf(ref holdfastv1.ResourceRef, shards int) int {
	if shards <= 1 {
		return 0
	}
	h := fnv.New64a()
	for _, part := range []string{ref.Group, ref.Kind, ref.Namespace, ref.Name} {
		_, _ = h.Write([]byte(part))
		_, _ = h.Write([]byte{0})
	}
	return int(h.Sum64() % uint64(shards))
}

// Split returns the entries of each of shards shards, in their order in entries.
func Split(entries []holdfastv1.ResourceStatus, shards int) [][]holdfastv1.ResourceStatus {
	out := make([][]holdfastv1.ResourceStatus, max(shards, 1))
	for _, rs := range entries {
		i := ShardOf(rs.ResourceRef, shards)
		out[i] = append(out[i], rs)
	}
	return out
}

// Summary returns the entries a sharded status object lists itself: those not InSync, at most
// MaxSummarizedResources, and how many more there are.
func Summary(entries []holdfastv1.ResourceStatus) ([]holdfastv1.ResourceStatus, int32) {
	var listed []holdfastv1.ResourceStatus
	var omitted int32
	for _, rs := range entries {
		switch {
		case rs.State == holdfastv1.ResourceInSync:
		case len(listed) < holdfastv1.MaxSummarizedResources:
			listed = append(listed, rs)
		default:
			omitted++
		}
	}
	return listed, omitted
}

func largest(shards [][]holdfastv1.ResourceStatus) int {
	out := 0
	for _, s := range shards {
		out = max(out, jsonSize(s))
	}
	return out
}

// jsonSize is about the size of entries as JSON, from the lengths of their strings (with room
// for the keys and quotes), without marshalling them: Layout runs at every status write.
func jsonSize(entries []holdfastv1.ResourceStatus) int {
	n := 2
	for _, rs := range entries {
		n += entryOverhead + len(rs.Group) + len(rs.Version) + len(rs.Kind) + len(rs.Namespace) + len(rs.Name) +
			len(rs.Service) + len(rs.State) + len(rs.Message) + len(rs.ConflictWith) + len(rs.Diff) + len(rs.Desired) + len(rs.Owned)
		if d := rs.LastDrift; d != nil {
			n += entryOverhead + len(d.Manager) + len(d.Operation) + len(d.Subresource)
			for _, f := range d.Fields {
				n += fieldOverhead + 2*(len(f.Path)+len(f.Old)+len(f.New))
			}
		}
	}
	return n
}

// entryOverhead and fieldOverhead are generous sizes of the keys and punctuation of an entry
// (or a drift detail) and of a drift's field; field values are counted twice for JSON escapes.
const (
	entryOverhead = 160
	fieldOverhead = 40
)

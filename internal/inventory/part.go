package inventory

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// A part of a sharded inventory: what recording a drift correction reads and writes, so that its
// cost does not grow with the inventory. A correction changes the entries of the objects it put
// back and no others; the entries not InSync are all in the status object's summary when it
// omits none. So the part is the shards holding the changed entries, read whole, and the summary's
// entries of the other shards: every entry of the inventory that is not InSync, and the InSync
// ones of the shards read. What the part leaves out is InSync and is not changed.

// ErrBeyondPart says that entries given to SavePart change what the part did not read: an entry
// of a shard not read, or one added or dropped there. The caller reads the inventory whole.
var ErrBeyondPart = errors.New("the inventory changed beyond the part read")

// Part is what LoadPart read of an inventory, for SavePart.
type Part struct {
	// names are the shards' names as the status object names them; read the shards read whole,
	// by index.
	names []string
	read  map[int]*holdfastv1.ClusterServiceInventory
	// others are the summary's entries of the shards not read, by shard, as read.
	others map[int][]holdfastv1.ResourceStatus
}

// Partial reports whether LoadPart can read a part of css's inventory: it is in shards and the
// summary lists every entry that is not InSync.
func Partial(css *holdfastv1.ClusterServiceStatus) bool {
	inv := css.Status.Inventory
	return inv != nil && inv.Omitted == 0 && len(inv.Names) > 0
}

// LoadPart returns the part of css's inventory (css just read from the API server, Partial)
// that holds the entries of refs, in shard order as Load would return them: the shards holding
// refs, read by name, and the summary's entries of the others. It returns an *IncompleteError when
// a shard it reads is missing or not what the status object says, like Load.
func (s Store) LoadPart(ctx context.Context, css *holdfastv1.ClusterServiceStatus, refs []holdfastv1.ResourceRef) ([]holdfastv1.ResourceStatus, *Part, error) {
	if !Partial(css) {
		return nil, nil, fmt.Errorf("the inventory of ClusterServiceStatus %s is not in shards with a whole summary", klog.KObj(css))
	}
	names := css.Status.Inventory.Names
	p := &Part{names: names, read: map[int]*holdfastv1.ClusterServiceInventory{}, others: map[int][]holdfastv1.ResourceStatus{}}
	for _, ref := range refs {
		p.read[ShardOf(ref, len(names))] = nil
	}
	var problems []string
	for i := range p.read {
		sh := &holdfastv1.ClusterServiceInventory{}
		err := s.Reader.Get(ctx, client.ObjectKey{Namespace: css.Namespace, Name: names[i]}, sh)
		switch {
		case apierrors.IsNotFound(err):
			problems = append(problems, fmt.Sprintf("shard %s is missing", names[i]))
		case err != nil:
			return nil, nil, fmt.Errorf("reading inventory shard %s of ClusterServiceStatus %s: %w", names[i], klog.KObj(css), err)
		default:
			if msg := misfit(sh, css, i); msg != "" {
				problems = append(problems, msg)
			}
			p.read[i] = sh
		}
	}
	if len(problems) > 0 {
		return nil, nil, &IncompleteError{Status: css.Name, Problems: problems}
	}
	for _, rs := range css.Status.Resources {
		if i := ShardOf(rs.ResourceRef, len(names)); p.read[i] == nil {
			p.others[i] = append(p.others[i], rs)
		}
	}
	var entries []holdfastv1.ResourceStatus
	for i := range names {
		if sh := p.read[i]; sh != nil {
			entries = append(entries, sh.Spec.Resources...)
		} else {
			entries = append(entries, p.others[i]...)
		}
	}
	return entries, p, nil
}

// SavePart writes the shards of the part whose entries changed and returns the status to write,
// as Save does: a shallow copy of css.Status with the summary of entries, the part as changed,
// and the same shards named. It returns ErrBeyondPart, writing nothing, when entries change what
// the part did not read, or a shard would outgrow maxShardBytes (a new layout is Save's).
func (s Store) SavePart(ctx context.Context, css *holdfastv1.ClusterServiceStatus, entries []holdfastv1.ResourceStatus, p *Part) (holdfastv1.ClusterServiceStatusStatus, error) {
	st := css.Status
	byShard := map[int][]holdfastv1.ResourceStatus{}
	for _, rs := range entries {
		i := ShardOf(rs.ResourceRef, len(p.names))
		byShard[i] = append(byShard[i], rs)
	}
	var writes []int
	for i := range p.names {
		sh, read := p.read[i]
		if !read {
			if !equality.Semantic.DeepEqual(byShard[i], p.others[i]) {
				return st, fmt.Errorf("%w: shard %s", ErrBeyondPart, p.names[i])
			}
			continue
		}
		if jsonSize(byShard[i]) > maxShardBytes {
			return st, fmt.Errorf("%w: shard %s would outgrow %d bytes", ErrBeyondPart, p.names[i], maxShardBytes)
		}
		if !upToDate(sh, css, shardSpec(css, i, len(p.names), byShard[i])) {
			writes = append(writes, i)
		}
	}
	for _, i := range writes {
		if err := s.write(ctx, css, p.names[i], shardSpec(css, i, len(p.names), byShard[i]), p.read[i]); err != nil {
			return st, err
		}
	}
	inv := *st.Inventory
	st.Resources, inv.Omitted = Summary(entries)
	st.Inventory = &inv
	return st, nil
}

// misfit says why sh is not shard i of css as css names it, "" when it is.
func misfit(sh *holdfastv1.ClusterServiceInventory, css *holdfastv1.ClusterServiceStatus, i int) string {
	names := css.Status.Inventory.Names
	switch {
	case sh.Spec.ClusterServiceStatus != css.Name || int(sh.Spec.Shard) != i || int(sh.Spec.Shards) != len(names):
		return fmt.Sprintf("shard %s is shard %d of %d of %q, not shard %d of %d of this status object",
			names[i], sh.Spec.Shard, sh.Spec.Shards, sh.Spec.ClusterServiceStatus, i, len(names))
	case int(sh.Spec.Count) != len(sh.Spec.Resources):
		return fmt.Sprintf("shard %s says it holds %d entries and holds %d", names[i], sh.Spec.Count, len(sh.Spec.Resources))
	}
	return ""
}

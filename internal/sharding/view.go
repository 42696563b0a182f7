package sharding

import (
	"hash/fnv"
	"slices"
	"strings"
)

// View is the set of replicas a replica divides the clusters among: member identities, sorted
// and without duplicates. Every replica that acts on the same view gives each cluster the same
// owner.
type View []string

// NewView returns the view of ids.
func NewView(ids ...string) View {
	v := slices.Clone(ids)
	v = slices.DeleteFunc(v, func(id string) bool { return id == "" })
	slices.Sort(v)
	return slices.Compact(v)
}

// ParseView reads a view as String writes it.
func ParseView(s string) View {
	if s == "" {
		return nil
	}
	return NewView(strings.Split(s, ",")...)
}

// String is the view as published in a Lease annotation: the members, comma-separated (member
// identities are DNS names, which have no comma).
func (v View) String() string { return strings.Join(v, ",") }

// Equal reports whether v and o hold the same members.
func (v View) Equal(o View) bool { return slices.Equal(v, o) }

// Owner is the member that handles cluster under v, by rendezvous (highest random weight)
// hashing: each member scores the cluster and the highest score wins. A member joining takes
// about 1/n of the clusters, each from whichever member held it; a member leaving hands each of
// its clusters to the member that scored second for it; no other cluster moves. Empty for an
// empty view.
func (v View) Owner(cluster string) string {
	var owner string
	var best uint64
	for _, m := range v {
		if s := score(m, cluster); owner == "" || s > best || (s == best && m < owner) {
			owner, best = m, s
		}
	}
	return owner
}

// score is the weight of member for cluster: 64-bit FNV-1a of both, then the SplitMix64
// finalizer, as FNV alone spreads keys that differ in a few trailing characters (cluster-1,
// cluster-2, ...) poorly across the high bits.
func score(member, cluster string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(member))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(cluster))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Ownership is what one replica may act on: the clusters it owns under every view in Views. A
// replica changing its view keeps both until the others agree (see package doc), so that a
// cluster whose owner the views disagree about is handled by nobody rather than by two.
type Ownership struct {
	Self  string
	Views []View
}

// Owns reports whether Self owns cluster under every view; nothing is owned without a view.
func (o Ownership) Owns(cluster string) bool {
	if o.Self == "" || len(o.Views) == 0 {
		return false
	}
	for _, v := range o.Views {
		if v.Owner(cluster) != o.Self {
			return false
		}
	}
	return true
}

// Narrowed is o restricted to what Self also owns under v: still nothing if o owns nothing.
func (o Ownership) Narrowed(v View) Ownership {
	if len(o.Views) == 0 {
		return o
	}
	return Ownership{Self: o.Self, Views: append(slices.Clone(o.Views), v)}
}

package sharding

// Member is one live replica as a read of the member Leases showed it.
type Member struct {
	ID string
	// View is the view the member published: what it acts on.
	View View
}

// State is one replica's side of the hand-over protocol (see package doc), without I/O: the
// coordinator feeds it what it reads and writes, in this order each round: Plan from the last
// read, Publishable, the write of that view to the replica's Lease (Written when it succeeded),
// a read of every Lease (Observed, only after a successful write in the same round).
type State struct {
	Self string
	// Published is the view last written to the replica's Lease.
	Published View
	// Pending is the view the replica moves to once it no longer acts on the clusters it loses
	// (Publishable); nil when it acts on the view it wants.
	Pending View
	// Acting is what the replica may act on now.
	Acting Ownership
	// observed is set by the first Observed: before it, the replica knows no member and
	// publishes the empty view, which the others ignore (a view of itself alone would give it
	// every cluster and make every other member stop them all until it learnt better).
	observed bool
}

// NewState is the state of a replica that acts on nothing yet.
func NewState(self string) *State {
	return &State{Self: self, Acting: Ownership{Self: self}}
}

// Plan takes the live members of the last read (self included or not) and makes their view
// the one to move to. Acting only narrows here: what the replica loses under the new view it
// stops at once; what it gains waits for a read that shows every member agreeing.
func (s *State) Plan(live []string) {
	if !s.observed {
		return
	}
	desired := NewView(append(live, s.Self)...)
	if desired.Equal(s.Published) {
		s.Pending = nil
		return
	}
	s.Pending = desired
	s.Acting = s.Acting.Narrowed(desired)
}

// Publishable is the view to write in this round's renewal: the pending one once drained (no
// reconcile is still running on a cluster Acting lost), the published one otherwise.
func (s *State) Publishable(drained bool) View {
	if s.Pending != nil && drained {
		return s.Pending
	}
	return s.Published
}

// Written records that v is in the replica's Lease.
func (s *State) Written(v View) {
	s.Published = v
	if s.Pending.Equal(v) {
		s.Pending = nil
	}
}

// Observed takes the live members of a read made after this round's successful write. The
// replica acts on the clusters it owns under its own views and under every other live member's
// published view (a member that published none acts on nothing): another member acts on a cluster only under a view in which it owns it, and
// the replica has just read that no live member's view gives the cluster to anyone else. As a
// member publishes a view only after it stopped acting on what it loses under it, and each side
// reads after it writes, two replicas cannot both act on one cluster (package doc).
func (s *State) Observed(live []Member) {
	views := []View{s.Published}
	if s.Pending != nil {
		views = append(views, s.Pending)
	}
	for _, m := range live {
		// A member that published no view acts on nothing, and will read ours before it does.
		if m.ID != s.Self && len(m.View) > 0 {
			views = append(views, m.View)
		}
	}
	s.Acting = Ownership{Self: s.Self, Views: views}
	s.observed = true
}

// Lost makes the replica act on nothing: its Lease was not renewed in time, and the others may
// soon count it dead.
func (s *State) Lost() {
	s.Acting = Ownership{Self: s.Self}
}

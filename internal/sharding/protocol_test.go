package sharding

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// sim runs the hand-over protocol of several replicas over an in-memory store of published
// views, with the steps of their rounds interleaved at random, replicas killed and added, and
// writes that fail (some after landing).
type sim struct {
	rng      *rand.Rand
	store    map[string]View // the member Leases: published views
	expires  map[string]int  // a killed replica's Lease disappears (expires) at that step
	replicas map[string]*simReplica
	next     int
	step     int
}

type simReplica struct {
	st       *State
	live     []string
	readNext bool // the write of this round succeeded: the read comes next
}

func newSim(seed uint64, n int) *sim {
	s := &sim{rng: rand.New(rand.NewPCG(seed, 1)), store: map[string]View{}, expires: map[string]int{}, replicas: map[string]*simReplica{}}
	for range n {
		s.add()
	}
	return s
}

func (s *sim) add() {
	s.next++
	id := fmt.Sprintf("r%d", s.next)
	s.replicas[id] = &simReplica{st: NewState(id)}
}

// kill stops a replica: it acts on nothing from now on; its Lease expires later.
func (s *sim) kill(id string) {
	delete(s.replicas, id)
	if _, ok := s.store[id]; ok {
		s.expires[id] = s.step + 1 + s.rng.IntN(20)
	}
}

// advance runs one step of replica id: plan and write, or read.
func (s *sim) advance(id string, writesFail bool) {
	r := s.replicas[id]
	if !r.readNext {
		r.st.Plan(r.live)
		v := r.st.Publishable(s.rng.IntN(3) > 0)
		if writesFail && s.rng.IntN(8) == 0 {
			if s.rng.IntN(2) == 0 {
				s.store[id] = v // landed, but the replica does not know
			}
			return
		}
		s.store[id] = v
		r.st.Written(v)
		r.readNext = true
		return
	}
	r.readNext = false
	var members []Member
	r.live = r.live[:0]
	for m, v := range s.store {
		r.live = append(r.live, m)
		members = append(members, Member{ID: m, View: v})
	}
	r.st.Observed(members)
}

func (s *sim) ids() []string {
	var ids []string
	for id := range s.replicas {
		ids = append(ids, id)
	}
	return NewView(ids...)
}

func (s *sim) tick() {
	s.step++
	for id, at := range s.expires {
		if s.step >= at {
			delete(s.store, id)
			delete(s.expires, id)
		}
	}
}

// owners are the replicas acting on cluster.
func (s *sim) owners(cluster string) []string {
	var out []string
	for _, id := range s.ids() {
		if s.replicas[id].st.Acting.Owns(cluster) {
			out = append(out, id)
		}
	}
	return out
}

func TestHandOverNeverHasTwoReplicasActOnACluster(t *testing.T) {
	clusters := clusterNames(24)
	for seed := range uint64(100) {
		s := newSim(seed, 2+int(seed%3))
		for range 600 {
			s.tick()
			switch ids := s.ids(); {
			case s.rng.IntN(60) == 0 && len(ids) > 1:
				s.kill(ids[s.rng.IntN(len(ids))])
			case s.rng.IntN(60) == 0 && len(ids) < 5:
				s.add()
			default:
				s.advance(ids[s.rng.IntN(len(ids))], true)
			}
			for _, c := range clusters {
				if o := s.owners(c); len(o) > 1 {
					t.Fatalf("seed %d, step %d: cluster %s handled by %v at once", seed, s.step, c, o)
				}
			}
		}
		// Quiet: no member changes, no failed writes. Every cluster gets exactly one owner.
		for range 30 {
			s.tick()
			for _, id := range s.ids() {
				s.advance(id, false)
			}
		}
		for _, c := range clusters {
			if o := s.owners(c); len(o) != 1 {
				t.Fatalf("seed %d: after the members settled, cluster %s is handled by %v, want one replica", seed, c, o)
			}
		}
	}
}

// settle runs rounds of every replica, in turn, with no failures.
func (s *sim) settle(rounds int, check func()) {
	for range rounds {
		for _, id := range s.ids() {
			for range 2 {
				s.tick()
				s.advance(id, false)
				check()
			}
		}
	}
}

func TestJoiningReplicaStopsOnlyTheClustersItTakes(t *testing.T) {
	clusters := clusterNames(60)
	s := newSim(1, 2)
	s.settle(8, func() {})
	before, after := NewView("r1", "r2"), NewView("r1", "r2", "r3")
	for _, c := range clusters {
		if o := s.owners(c); len(o) != 1 || o[0] != before.Owner(c) {
			t.Fatalf("before the join, cluster %s is handled by %v, want %s", c, o, before.Owner(c))
		}
	}
	s.add()
	moved := 0
	s.settle(8, func() {
		for _, c := range clusters {
			if before.Owner(c) == after.Owner(c) {
				if o := s.owners(c); len(o) != 1 || o[0] != before.Owner(c) {
					t.Fatalf("step %d: cluster %s, which stays with %s, is handled by %v", s.step, c, before.Owner(c), o)
				}
			}
		}
	})
	for _, c := range clusters {
		if o := s.owners(c); len(o) != 1 || o[0] != after.Owner(c) {
			t.Errorf("after the join, cluster %s is handled by %v, want %s", c, o, after.Owner(c))
		}
		if before.Owner(c) != after.Owner(c) {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("no cluster moved to the new replica")
	}
}

package sharding

import (
	"fmt"
	"testing"
)

func clusterNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("fleet/cluster-%d", i+1)
	}
	return names
}

func shares(v View, clusters []string) map[string]int {
	got := map[string]int{}
	for _, c := range clusters {
		got[v.Owner(c)]++
	}
	return got
}

func TestOwnerSpreadsClustersEvenly(t *testing.T) {
	clusters := clusterNames(1000)
	for _, v := range []View{NewView("a", "b"), NewView("holdfast-7d9c-x1", "holdfast-7d9c-x2", "holdfast-7d9c-x3", "holdfast-7d9c-x4")} {
		got := shares(v, clusters)
		want := len(clusters) / len(v)
		for _, m := range v {
			if got[m] < want*8/10 || got[m] > want*12/10 {
				t.Errorf("view %s: member %s owns %d of %d clusters, want %d ± 20%%", v, m, got[m], len(clusters), want)
			}
		}
	}
}

func TestOwnerMovesOnlyWhatAMemberTakesOrLeaves(t *testing.T) {
	clusters := clusterNames(1000)
	two, three := NewView("a", "b"), NewView("a", "b", "c")
	moved := 0
	for _, c := range clusters {
		before, after := two.Owner(c), three.Owner(c)
		if before != after {
			moved++
			if after != "c" {
				t.Errorf("cluster %s moved from %s to %s when c joined; only moves to c are needed", c, before, after)
			}
		}
	}
	if moved < 250 || moved > 420 {
		t.Errorf("%d of 1000 clusters moved when a third member joined, want about a third", moved)
	}
	// c leaves again: exactly its clusters move, each back where it was.
	for _, c := range clusters {
		if three.Owner(c) != "c" && three.Owner(c) != two.Owner(c) {
			t.Errorf("cluster %s of %s moved when c left", c, three.Owner(c))
		}
	}
}

func TestView(t *testing.T) {
	v := NewView("b", "a", "b", "")
	if v.String() != "a,b" {
		t.Errorf("NewView(b, a, b, \"\") = %q, want a,b", v.String())
	}
	if !ParseView(v.String()).Equal(v) || ParseView("") != nil {
		t.Errorf("ParseView does not read what String writes")
	}
	if NewView().Owner("fleet/x") != "" {
		t.Errorf("an empty view gives a cluster an owner")
	}
}

func TestOwnership(t *testing.T) {
	ab, abc := NewView("a", "b"), NewView("a", "b", "c")
	var both, onlyAB string
	for _, c := range clusterNames(200) {
		if ab.Owner(c) == "a" && abc.Owner(c) == "a" && both == "" {
			both = c
		}
		if ab.Owner(c) == "a" && abc.Owner(c) == "c" && onlyAB == "" {
			onlyAB = c
		}
	}
	for _, tc := range []struct {
		name    string
		o       Ownership
		cluster string
		want    bool
	}{
		{"no view", Ownership{Self: "a"}, both, false},
		{"owner under the one view", Ownership{Self: "a", Views: []View{ab}}, both, true},
		{"another member's cluster", Ownership{Self: "b", Views: []View{ab}}, both, false},
		{"owner under both views", Ownership{Self: "a", Views: []View{ab, abc}}, both, true},
		{"owner under one view of two", Ownership{Self: "a", Views: []View{ab, abc}}, onlyAB, false},
		{"narrowed", Ownership{Self: "a", Views: []View{ab}}.Narrowed(abc), onlyAB, false},
		{"not a member", Ownership{Self: "x", Views: []View{ab}}, both, false},
		{"nothing narrowed", Ownership{Self: "a"}.Narrowed(ab), both, false},
	} {
		if got := tc.o.Owns(tc.cluster); got != tc.want {
			t.Errorf("%s: Owns(%s) = %v, want %v", tc.name, tc.cluster, got, tc.want)
		}
	}
}

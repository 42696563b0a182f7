package dependency

import (
	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Graph is the dependency graph of services across service sets as one reconcile of service set
// Own sees it: Own's services as rendered (Local), the other sets' specs as Lookup gives them.
// It reads nothing itself; the caller's Lookup does, and should read each set once.
type Graph struct {
	Own *holdfastv1.MultiClusterService
	// Local is the dependsOn of each of Own's services as rendered, by service name.
	Local map[string][]string
	// Lookup returns another service set, nil when it does not exist or could not be read.
	Lookup func(name string) *holdfastv1.MultiClusterService
	// MayDependOn says whether service set mcs may depend on other (tenancy.Policy.DependsOn);
	// edges it refuses are not followed.
	MayDependOn func(mcs, other *holdfastv1.MultiClusterService) error
}

// set returns a service set: Own, or what Lookup gives.
func (g *Graph) set(name string) *holdfastv1.MultiClusterService {
	if name == g.Own.Name {
		return g.Own
	}
	return g.Lookup(name)
}

// DependsOnOtherSets reports whether one of Own's services depends on another service set's.
func (g *Graph) DependsOnOtherSets() bool {
	for _, entries := range g.Local {
		for _, entry := range entries {
			if ref, err := Parse(g.Own.Name, entry); err == nil && ref.Set != g.Own.Name {
				return true
			}
		}
	}
	return false
}

// Declared returns the dependsOn of a service of a service set, and whether the set declares it
// (and does not disable it).
func (g *Graph) Declared(r Ref) ([]string, bool) {
	if r.Set == g.Own.Name {
		entries, ok := g.Local[r.Service]
		return entries, ok
	}
	mcs := g.set(r.Set)
	if mcs == nil {
		return nil, false
	}
	for _, svc := range mcs.Spec.Services {
		if svc.Name == r.Service && !svc.Disabled {
			return svc.DependsOn, true
		}
	}
	return nil, false
}

// Next returns the services r depends on, for Cycle: those of service sets that exist, and that
// r's set may depend on.
func (g *Graph) Next(r Ref) []Ref {
	entries, _ := g.Declared(r)
	var out []Ref
	for _, entry := range entries {
		to, err := Parse(r.Set, entry)
		if err != nil {
			continue
		}
		if to.Set != r.Set {
			from, other := g.set(r.Set), g.set(to.Set)
			if from == nil || other == nil || g.MayDependOn(from, other) != nil {
				continue
			}
		}
		out = append(out, to)
	}
	return out
}

// Refused returns why a service of Own with these dependsOn entries names a service set Own may
// not depend on (MayDependOn's error), or nil.
func (g *Graph) Refused(dependsOn []string) error {
	for _, entry := range dependsOn {
		ref, err := Parse(g.Own.Name, entry)
		if err != nil || ref.Set == g.Own.Name {
			continue
		}
		if other := g.set(ref.Set); other != nil {
			if err := g.MayDependOn(g.Own, other); err != nil {
				return err
			}
		}
	}
	return nil
}

// CrossesSets reports whether a path of services (a cycle Cycle found) goes through a service
// set other than set.
func CrossesSets(path []Ref, set string) bool {
	for _, r := range path {
		if r.Set != set {
			return true
		}
	}
	return false
}

package clusterservicestatus

import (
	"slices"
	"strings"
	"testing"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestDependencyOrder: services come after what they depend on, in declaration order
// otherwise; one naming a service the set does not have, and those in or behind a cycle, get a
// problem naming it.
func TestDependencyOrder(t *testing.T) {
	svc := func(name string, deps ...string) renderedService {
		return renderedService{svc: holdfastv1.Service{Name: name, DependsOn: deps}}
	}
	names := func(rs []renderedService) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.svc.Name)
		}
		return out
	}
	ordered, problems := dependencyOrder([]renderedService{svc("app", "db", "cache"), svc("db"), svc("web", "app"), svc("cache")})
	if want := []string{"db", "cache", "app", "web"}; !slices.Equal(names(ordered), want) || len(problems) != 0 {
		t.Errorf("order = %v (problems %v), want %v", names(ordered), problems, want)
	}

	ordered, problems = dependencyOrder([]renderedService{svc("x", "y"), svc("y", "x"), svc("z", "x"), svc("w"), svc("v", "nope")})
	if got := names(ordered); len(got) != 5 || got[0] != "w" {
		t.Errorf("order = %v, want every service, the free ones first", got)
	}
	for _, name := range []string{"x", "y", "z"} {
		if p := problems[name]; p == nil || p.reason != holdfastv1.InvalidDependencyReason || !strings.Contains(p.message, "cycle among services x, y, z") {
			t.Errorf("%s: problem %+v, want the cycle named", name, p)
		}
	}
	if p := problems["v"]; p == nil || !strings.Contains(p.message, `service "nope", which the service set does not have`) {
		t.Errorf("v: problem %+v, want the unknown name named", p)
	}
	if problems["w"] != nil {
		t.Errorf("w depends on nothing, yet: %+v", problems["w"])
	}
}

package clusterservicestatus

import (
	"slices"
	"strings"
	"testing"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/dependency"
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
	ordered, problems := dependencyOrder("web", []renderedService{svc("app", "db", "web/cache"), svc("db"), svc("web", "app"), svc("cache")})
	if want := []string{"db", "cache", "app", "web"}; !slices.Equal(names(ordered), want) || len(problems) != 0 {
		t.Errorf("order = %v (problems %v), want %v", names(ordered), problems, want)
	}

	ordered, problems = dependencyOrder("web", []renderedService{svc("x", "y"), svc("y", "x"), svc("z", "x"), svc("w", "storage/db"), svc("v", "nope"), svc("u", "a/b/c")})
	if got := names(ordered); len(got) != 6 || got[0] != "w" {
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
	if p := problems["u"]; p == nil || p.reason != holdfastv1.InvalidDependencyReason || !strings.Contains(p.message, `"a/b/c"`) {
		t.Errorf("u: problem %+v, want the malformed entry named", p)
	}
	if problems["w"] != nil {
		t.Errorf("w depends on nothing in its set, yet: %+v", problems["w"])
	}
}

// TestDependencyWait: a service waits for the services of its set not ready in this reconcile
// and for those of other sets not ready as recorded (or not looked at), naming each and, for
// another set's, why.
func TestDependencyWait(t *testing.T) {
	svc := holdfastv1.Service{Name: "app", DependsOn: []string{"db", "web/cache", "storage/bucket", "network/cni"}}
	others := map[dependency.Ref]string{{Set: "storage", Service: "bucket"}: "", {Set: "network", Service: "cni"}: "MultiClusterService network does not exist"}
	got := dependencyWait(svc, "web", map[string]bool{"db": true, "cache": false}, others)
	want := "waits for cache, network/cni to be applied and healthy on the cluster (dependsOn); network/cni: MultiClusterService network does not exist"
	if got != want {
		t.Errorf("dependencyWait = %q, want %q", got, want)
	}
	others[dependency.Ref{Set: "network", Service: "cni"}] = ""
	if got := dependencyWait(svc, "web", map[string]bool{"db": true, "cache": true}, others); got != "" {
		t.Errorf("dependencyWait with everything ready = %q", got)
	}
	delete(others, dependency.Ref{Set: "storage", Service: "bucket"})
	if got := dependencyWait(svc, "web", map[string]bool{"db": true, "cache": true}, others); !strings.Contains(got, "storage/bucket: not looked at") {
		t.Errorf("dependencyWait with another set's service not looked at = %q, want a wait", got)
	}
}

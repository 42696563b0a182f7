package dependency

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		entry string
		want  Ref
		err   string
	}{
		{entry: "db", want: Ref{"web", "db"}},
		{entry: "platform/db", want: Ref{"platform", "db"}},
		{entry: "web/db", want: Ref{"web", "db"}},
		{entry: "team-a.storage/db", want: Ref{"team-a.storage", "db"}}, // a ServiceSet's MultiClusterService
		{entry: "", err: "not a service name"},
		{entry: "a/b/c", err: `"b/c" is not a service name`},
		{entry: "/db", err: "not a MultiClusterService name"},
		{entry: "platform/", err: "not a service name"},
		{entry: "Platform/db", err: "not a MultiClusterService name"},
		{entry: "platform/db.x", err: "not a service name"},
		{entry: strings.Repeat("a", 254) + "/db", err: "not a MultiClusterService name"},
		{entry: "platform/" + strings.Repeat("a", 64), err: "not a service name"},
	} {
		t.Run(tt.entry, func(t *testing.T) {
			got, err := Parse("web", tt.entry)
			switch {
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("Parse(%q) = %v, %v; want an error with %q", tt.entry, got, err, tt.err)
			case tt.err == "" && (err != nil || got != tt.want):
				t.Errorf("Parse(%q) = %v, %v; want %v", tt.entry, got, err, tt.want)
			}
		})
	}
}

func TestOtherSets(t *testing.T) {
	services := []holdfastv1.Service{
		{Name: "app", DependsOn: []string{"db", "storage/db", "web/cache", "bad/"}},
		{Name: "cache", DependsOn: []string{"network/cni", "storage/bucket"}},
	}
	if got, want := OtherSets("web", services), []string{"network", "storage"}; !slices.Equal(got, want) {
		t.Errorf("OtherSets = %q, want %q", got, want)
	}
	if got := OtherSets("web", []holdfastv1.Service{{Name: "app", DependsOn: []string{"db"}}}); got != nil {
		t.Errorf("OtherSets of a set depending only on itself = %q, want none", got)
	}
}

// graph is a dependency graph written as "set/service": entries.
type graph map[string][]string

func (g graph) next(r Ref) []Ref {
	var out []Ref
	for _, e := range g[r.String()] {
		ref, err := Parse(r.Set, e)
		if err == nil {
			out = append(out, ref)
		}
	}
	return out
}

func TestCycle(t *testing.T) {
	for _, tt := range []struct {
		name  string
		graph graph
		start Ref
		want  string
	}{
		{"no dependencies", graph{}, Ref{"a", "x"}, ""},
		{"a chain", graph{"a/x": {"b/y"}, "b/y": {"c/z"}, "c/z": {"a/w"}}, Ref{"a", "x"}, ""},
		{"across two sets", graph{"a/x": {"b/y"}, "b/y": {"a/x"}}, Ref{"a", "x"}, "a/x -> b/y -> a/x"},
		{"through a service of the same set", graph{"a/x": {"w"}, "a/w": {"b/y"}, "b/y": {"c/z"}, "c/z": {"a/x"}},
			Ref{"a", "x"}, "a/x -> a/w -> b/y -> c/z -> a/x"},
		{"the shortest of two", graph{"a/x": {"b/y", "c/z"}, "b/y": {"d/v"}, "d/v": {"a/x"}, "c/z": {"a/x"}},
			Ref{"a", "x"}, "a/x -> c/z -> a/x"},
		{"behind a cycle it is not in", graph{"a/x": {"b/y"}, "b/y": {"c/z"}, "c/z": {"b/y"}}, Ref{"a", "x"}, ""},
		{"itself", graph{"a/x": {"x"}}, Ref{"a", "x"}, "a/x -> a/x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Cycle(tt.start, tt.graph.next)
			if err != nil || FormatCycle(got) != tt.want {
				t.Errorf("Cycle = %q, %v; want %q", FormatCycle(got), err, tt.want)
			}
		})
	}
}

// TestCycleBounded: a graph larger than MaxWalk stops the walk with ErrTooLarge instead of
// visiting it all, even when it is endless (next makes up services).
func TestCycleBounded(t *testing.T) {
	calls := 0
	endless := func(r Ref) []Ref {
		calls++
		return []Ref{{Set: fmt.Sprintf("s%d", calls), Service: "x"}, {Set: fmt.Sprintf("t%d", calls), Service: "x"}}
	}
	if _, err := Cycle(Ref{"a", "x"}, endless); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Cycle over an endless graph: %v, want ErrTooLarge", err)
	}
	if calls > MaxWalk {
		t.Errorf("next called %d times, more than MaxWalk", calls)
	}
}

func TestReady(t *testing.T) {
	for _, tt := range []struct {
		name  string
		st    holdfastv1.ServiceStatus
		ready bool
		why   string
	}{
		{"applied and healthy", holdfastv1.ServiceStatus{Ready: metav1.ConditionTrue, Health: holdfastv1.HealthCurrent}, true, ""},
		{"applied, no health verdict", holdfastv1.ServiceStatus{Ready: metav1.ConditionTrue}, true, ""},
		{"applied, progressing", holdfastv1.ServiceStatus{Ready: metav1.ConditionTrue, Health: holdfastv1.HealthInProgress, HealthMessage: "ConfigMap/db: not ready"},
			false, "not healthy there (InProgress: ConfigMap/db: not ready)"},
		{"applied, timed out", holdfastv1.ServiceStatus{Ready: metav1.ConditionTrue, Health: holdfastv1.HealthFailed}, false, "not healthy there (Failed"},
		{"waiting itself", holdfastv1.ServiceStatus{Ready: metav1.ConditionFalse, Reason: holdfastv1.WaitingForDependenciesReason, Message: "waits for x",
			Health: holdfastv1.HealthCurrent}, false, "not applied there (WaitingForDependencies: waits for x)"},
		{"long message clipped", holdfastv1.ServiceStatus{Ready: metav1.ConditionFalse, Reason: "ApplyFailed", Message: strings.Repeat("é", 300)}, false, "…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ready, why := Ready(tt.st)
			if ready != tt.ready || !strings.Contains(why, tt.why) || len(why) > maxWhy+len("…") {
				t.Errorf("Ready = %v, %q; want %v, %q", ready, why, tt.ready, tt.why)
			}
		})
	}
	got := ReadyServices([]holdfastv1.ServiceStatus{{Name: "a", Ready: metav1.ConditionTrue}, {Name: "b", Ready: metav1.ConditionFalse}})
	if !got["a"] || got["b"] || len(got) != 2 {
		t.Errorf("ReadyServices = %v", got)
	}
}

// TestGraph: the walk across service sets follows the dependsOn of the set's services as
// rendered and of the other sets' specs, skipping sets that do not exist, services they do not
// declare or disable, and edges to sets the tenancy rule refuses.
func TestGraph(t *testing.T) {
	set := func(name string, services ...holdfastv1.Service) *holdfastv1.MultiClusterService {
		m := &holdfastv1.MultiClusterService{Spec: holdfastv1.MultiClusterServiceSpec{Services: services}}
		m.Name = name
		return m
	}
	off := holdfastv1.Service{Name: "off", DependsOn: []string{"web/app"}, Disabled: true}
	sets := map[string]*holdfastv1.MultiClusterService{
		"storage": set("storage", holdfastv1.Service{Name: "db", DependsOn: []string{"web/app", "cache"}}, off),
		"tenant":  set("tenant", holdfastv1.Service{Name: "db", DependsOn: []string{"web/app"}}),
	}
	g := &Graph{
		Own:    set("web"),
		Local:  map[string][]string{"app": {"storage/db", "tenant/db", "nowhere/x", "cache"}, "cache": nil, "bad": {"a/b/c", "tenant/db"}},
		Lookup: func(name string) *holdfastv1.MultiClusterService { return sets[name] },
		MayDependOn: func(mcs, other *holdfastv1.MultiClusterService) error {
			if other.Name == "tenant" || mcs.Name == "tenant" {
				return errors.New("refused")
			}
			return nil
		},
	}
	for _, tt := range []struct {
		from     Ref
		next     string
		declared bool
	}{
		{Ref{"web", "app"}, "storage/db web/cache", true},
		{Ref{"web", "cache"}, "", true},
		{Ref{"web", "gone"}, "", false},
		{Ref{"storage", "db"}, "web/app storage/cache", true},
		{Ref{"storage", "off"}, "", false},
		{Ref{"tenant", "db"}, "", true},
		{Ref{"nowhere", "x"}, "", false},
	} {
		var next []string
		for _, r := range g.Next(tt.from) {
			next = append(next, r.String())
		}
		if got := strings.Join(next, " "); got != tt.next {
			t.Errorf("Next(%s) = %q, want %q", tt.from, got, tt.next)
		}
		if _, declared := g.Declared(tt.from); declared != tt.declared {
			t.Errorf("Declared(%s) = %v, want %v", tt.from, declared, tt.declared)
		}
	}
	if err := g.Refused(g.Local["bad"]); err == nil || err.Error() != "refused" {
		t.Errorf("Refused(a set the tenancy rule refuses) = %v", err)
	}
	if err := g.Refused(g.Local["app"][2:]); err != nil {
		t.Errorf("Refused(a set that does not exist, a service of the set) = %v, want nil", err)
	}
	cycle, err := Cycle(Ref{"web", "app"}, g.Next)
	if err != nil || FormatCycle(cycle) != "web/app -> storage/db -> web/app" || !CrossesSets(cycle, "web") {
		t.Errorf("Cycle = %q, %v; want through storage", FormatCycle(cycle), err)
	}
	if CrossesSets([]Ref{{"web", "a"}, {"web", "b"}, {"web", "a"}}, "web") {
		t.Error("CrossesSets of a cycle within the set")
	}
	if !g.DependsOnOtherSets() {
		t.Error("DependsOnOtherSets = false")
	}
	g.Local = map[string][]string{"app": {"cache", "web/cache", "bad/"}}
	if g.DependsOnOtherSets() {
		t.Error("DependsOnOtherSets of a set depending only on itself")
	}
}

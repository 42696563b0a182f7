package drift

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// report is a drift record of a ConfigMap in namespace demo, as a watch reports it.
func report(name, rv string, typ holdfastv1.DriftType, fields ...holdfastv1.FieldChange) holdfastv1.DriftRecord {
	return holdfastv1.DriftRecord{ResourceRef: holdfastv1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "demo", Name: name},
		Service: "app", DriftDetail: holdfastv1.DriftDetail{Type: typ, ResourceVersion: rv, Fields: fields}}
}

func names(records []holdfastv1.DriftRecord) []string {
	out := []string{}
	for _, r := range records {
		out = append(out, r.Name)
	}
	return out
}

// One change, one record: a report is superseded by Holdfast's later write of the object, and by
// a record of the same or a later version of it, whatever the version of its kind.
func TestSupersededReports(t *testing.T) {
	cluster := types.NamespacedName{Namespace: "fleet", Name: "c1"}
	own := &OwnWrites{}
	k := keyOf(cluster, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "demo", "written")
	own.begin(k)
	own.end(k, true, "20", "sha256:a")
	v2 := report("recorded", "30", holdfastv1.DriftChanged)
	v2.Version = "v2"
	records := []holdfastv1.DriftRecord{report("recorded", "30", holdfastv1.DriftChanged), v2}
	for _, c := range []struct {
		what    string
		own     *OwnWrites
		cluster types.NamespacedName
		d       holdfastv1.DriftRecord
		want    bool
	}{
		{"no version", own, cluster, report("recorded", "", holdfastv1.DriftChanged), false},
		{"a version before Holdfast's write", own, cluster, report("written", "19", holdfastv1.DriftChanged), true},
		{"a version before Holdfast's write, on another cluster", own, types.NamespacedName{Namespace: "fleet", Name: "c2"},
			report("written", "19", holdfastv1.DriftChanged), false},
		{"a version before Holdfast's write, its writes not asked", nil, cluster, report("written", "19", holdfastv1.DriftChanged), false},
		{"the version after Holdfast's write", own, cluster, report("written", "21", holdfastv1.DriftChanged), false},
		{"the version a record holds", own, cluster, report("recorded", "30", holdfastv1.DriftChanged), true},
		{"an older version than a record holds", nil, cluster, report("recorded", "29", holdfastv1.DriftChanged), true},
		{"a later version than the records hold", nil, cluster, report("recorded", "31", holdfastv1.DriftChanged), false},
		{"another object's version a record holds", nil, cluster, report("other", "30", holdfastv1.DriftChanged), false},
	} {
		if got := Superseded(c.own, c.cluster, c.d, records); got != c.want {
			t.Errorf("%s: superseded %v, want %v", c.what, got, c.want)
		}
	}
}

func TestKeepReported(t *testing.T) {
	cm := func(name, namespace string, data map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"data": data}}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace(namespace)
		u.SetName(name)
		return u
	}
	field := func(path, old, new string) holdfastv1.FieldChange {
		return holdfastv1.FieldChange{Path: path, Old: old, New: new}
	}
	mcs := &holdfastv1.MultiClusterService{Spec: holdfastv1.MultiClusterServiceSpec{SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection}}
	pol := PolicyFor(mcs, holdfastv1.Service{Name: "app", Drift: &holdfastv1.ServiceDriftPolicy{
		Ignore: []holdfastv1.IgnoreRule{{Paths: []string{"/data/rotated"}}}}})
	optOut := PolicyFor(mcs, holdfastv1.Service{Name: "manual", Drift: &holdfastv1.ServiceDriftPolicy{Disabled: true}})
	app := DeclaredService{Policy: &pol, Namespace: "demo", Objects: []*unstructured.Unstructured{
		cm("settings", "demo", map[string]any{"a": "1", "rotated": "x"}),
		cm("defaulted", "", map[string]any{"a": "1"}), // apply puts it in the service's namespace
	}}
	manual := DeclaredService{Policy: &optOut, Namespace: "demo", Objects: []*unstructured.Unstructured{cm("manual", "demo", nil)}}
	failed := DeclaredService{Policy: &pol, Namespace: "demo", Failed: true}
	records := []holdfastv1.DriftRecord{report("settings", "30", holdfastv1.DriftChanged)}
	all := []DeclaredService{app, manual}

	for _, c := range []struct {
		what     string
		mode     holdfastv1.SyncMode
		declared []DeclaredService
		reported holdfastv1.DriftRecord
		// want is the fields kept, nil when the report is dropped.
		want       []string
		superseded int
	}{
		{"a change of a declared field", "", all,
			report("settings", "31", holdfastv1.DriftChanged, field(".data.a", `"1"`, `"2"`)), []string{".data.a"}, 0},
		{"outside ContinuousWithDriftDetection", holdfastv1.SyncModeContinuous, all,
			report("settings", "31", holdfastv1.DriftChanged, field(".data.a", `"1"`, `"2"`)), nil, 0},
		{"superseded by a record", "", all,
			report("settings", "30", holdfastv1.DriftChanged, field(".data.a", `"1"`, `"2"`)), nil, 1},
		{"an object declared without a namespace", "", all,
			report("defaulted", "31", holdfastv1.DriftChanged, field(".data.a", `"1"`, `"2"`)), []string{".data.a"}, 0},
		{"an object no longer declared", "", all,
			report("pruned", "31", holdfastv1.DriftDeleted), nil, 0},
		{"an object not known declared, a service failed", "", []DeclaredService{app, failed},
			report("pruned", "31", holdfastv1.DriftDeleted), []string{}, 0},
		{"a service that opted out", "", all,
			report("manual", "31", holdfastv1.DriftChanged, field(".data.a", `"1"`, `"2"`)), nil, 0},
		{"a change of an ignored field only", "", all,
			report("settings", "31", holdfastv1.DriftChanged, field(".data.rotated", `"x"`, `"y"`)), nil, 0},
		{"a change of ignored and declared fields", "", all,
			report("settings", "31", holdfastv1.DriftChanged, field(".data.rotated", `"x"`, `"y"`), field(".data.a", `"1"`, `"2"`)),
			[]string{".data.a"}, 0},
		{"a field gone the declaration no longer names", "", all,
			report("settings", "31", holdfastv1.DriftChanged, field(".data.old", `"1"`, "")), nil, 0},
		{"a declared field gone", "", all,
			report("settings", "31", holdfastv1.DriftChanged, field(".data.a", `"1"`, ""), field(".data.old", `"1"`, "")),
			[]string{".data.a"}, 0},
		{"a change without fields", "", all,
			report("settings", "31", holdfastv1.DriftChanged), []string{}, 0},
		{"a deletion", "", all,
			report("settings", "31", holdfastv1.DriftDeleted), []string{}, 0},
	} {
		mode := c.mode
		if mode == "" {
			mode = holdfastv1.SyncModeContinuousWithDriftDetection
		}
		kept, superseded := KeepReported([]holdfastv1.DriftRecord{c.reported}, mode, c.declared, nil, types.NamespacedName{}, records)
		if superseded != c.superseded {
			t.Errorf("%s: %d superseded, want %d", c.what, superseded, c.superseded)
		}
		switch {
		case c.want == nil && len(kept) != 0:
			t.Errorf("%s: kept %+v, want it dropped", c.what, kept)
		case c.want != nil && len(kept) != 1:
			t.Errorf("%s: kept %d, want 1", c.what, len(kept))
		case c.want != nil:
			var got []string
			for _, f := range kept[0].Fields {
				got = append(got, f.Path)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: fields %v, want %v", c.what, got, c.want)
			}
		}
	}
	if kept, _ := KeepReported(nil, holdfastv1.SyncModeContinuousWithDriftDetection, all, nil, types.NamespacedName{}, nil); kept != nil {
		t.Errorf("nothing reported: kept %+v", kept)
	}
	// Holdfast's write after the version reported supersedes it.
	cluster := types.NamespacedName{Namespace: "fleet", Name: "c1"}
	own := &OwnWrites{}
	k := keyOf(cluster, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "demo", "settings")
	own.begin(k)
	own.end(k, true, "40", "sha256:a")
	reported := []holdfastv1.DriftRecord{report("settings", "39", holdfastv1.DriftDeleted), report("settings", "41", holdfastv1.DriftDeleted)}
	kept, superseded := KeepReported(reported, holdfastv1.SyncModeContinuousWithDriftDetection, all, own, cluster, nil)
	if len(kept) != 1 || kept[0].ResourceVersion != "41" || superseded != 1 {
		t.Errorf("reports of versions 39 and 41, Holdfast wrote 40: kept %+v, %d superseded", kept, superseded)
	}
}

func TestNewReported(t *testing.T) {
	entry := func(desired string, state holdfastv1.ResourceState, last holdfastv1.DriftType) map[Ref]holdfastv1.ResourceStatus {
		rs := holdfastv1.ResourceStatus{ResourceRef: holdfastv1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "demo", Name: "settings"},
			Desired: desired, State: state}
		if last != "" {
			rs.LastDrift = &holdfastv1.DriftDetail{Type: last}
		}
		return map[Ref]holdfastv1.ResourceStatus{RefOf(rs.ResourceRef): rs}
	}
	records := []holdfastv1.DriftRecord{report("settings", "30", holdfastv1.DriftChanged)}
	for _, c := range []struct {
		what       string
		reported   holdfastv1.DriftRecord
		previous   map[Ref]holdfastv1.ResourceStatus
		want       bool
		superseded int
	}{
		{"a change", report("settings", "31", holdfastv1.DriftChanged), entry("d", holdfastv1.ResourceInSync, ""), true, 0},
		{"a change a record holds", report("settings", "30", holdfastv1.DriftChanged), nil, false, 1},
		{"a change of an object never applied", report("settings", "31", holdfastv1.DriftChanged), entry("", holdfastv1.ResourceFailed, ""), true, 0},
		{"a deletion, no entries from before", report("settings", "31", holdfastv1.DriftDeleted), nil, true, 0},
		{"a deletion of an applied object", report("settings", "31", holdfastv1.DriftDeleted), entry("d", holdfastv1.ResourceInSync, ""), true, 0},
		{"a deletion of an object never applied", report("settings", "31", holdfastv1.DriftDeleted), entry("", holdfastv1.ResourceFailed, ""), false, 0},
		{"a deletion of an object without an entry", report("settings", "31", holdfastv1.DriftDeleted), map[Ref]holdfastv1.ResourceStatus{}, false, 0},
		{"a deletion recorded, still gone", report("settings", "31", holdfastv1.DriftDeleted),
			entry("d", holdfastv1.ResourceUncorrectable, holdfastv1.DriftDeleted), false, 0},
		{"a deletion recorded, put back since", report("settings", "31", holdfastv1.DriftDeleted),
			entry("d", holdfastv1.ResourceInSync, holdfastv1.DriftDeleted), true, 0},
		{"a deletion after a change", report("settings", "31", holdfastv1.DriftDeleted),
			entry("d", holdfastv1.ResourceDrifted, holdfastv1.DriftChanged), true, 0},
	} {
		fresh, superseded := NewReported([]holdfastv1.DriftRecord{c.reported}, records, c.previous)
		if got := len(fresh) == 1; got != c.want || superseded != c.superseded {
			t.Errorf("%s: new %v (%d superseded), want %v (%d)", c.what, got, superseded, c.want, c.superseded)
		}
	}
	reported := []holdfastv1.DriftRecord{report("a", "1", holdfastv1.DriftChanged), report("b", "2", holdfastv1.DriftChanged)}
	if fresh, _ := NewReported(reported, nil, nil); !slices.Equal(names(fresh), []string{"a", "b"}) {
		t.Errorf("new drifts %v, want a and b in the order reported", names(fresh))
	}
}

func TestDeletesContainer(t *testing.T) {
	of := func(group, kind string, typ holdfastv1.DriftType) []holdfastv1.DriftRecord {
		return []holdfastv1.DriftRecord{report("x", "", holdfastv1.DriftChanged),
			{ResourceRef: holdfastv1.ResourceRef{Group: group, Kind: kind, Name: "x"}, DriftDetail: holdfastv1.DriftDetail{Type: typ}}}
	}
	for _, c := range []struct {
		what   string
		drifts []holdfastv1.DriftRecord
		want   bool
	}{
		{"none", nil, false},
		{"a Namespace deleted", of("", "Namespace", holdfastv1.DriftDeleted), true},
		{"a CRD deleted", of("apiextensions.k8s.io", "CustomResourceDefinition", holdfastv1.DriftDeleted), true},
		{"a Namespace changed", of("", "Namespace", holdfastv1.DriftChanged), false},
		{"a ConfigMap deleted", of("", "ConfigMap", holdfastv1.DriftDeleted), false},
		{"a Namespace of another group deleted", of("example.com", "Namespace", holdfastv1.DriftDeleted), false},
	} {
		if got := DeletesContainer(c.drifts); got != c.want {
			t.Errorf("%s: %v, want %v", c.what, got, c.want)
		}
	}
}

package drift

import (
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestDetailOfBoundsFieldsAndHidesDeletionAuthors(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	v := Verdict{Drifted: true, Author: Author{Manager: "kubectl", Operation: "Update"}}
	for range holdfastv1.MaxDriftFields + 5 {
		v.Fields = append(v.Fields, FieldChange{Path: ".data.x", Old: `"a"`, New: `"b"`})
	}
	d := DetailOf(v, now, holdfastv1.DriftDetectedByWatch)
	if d.Type != holdfastv1.DriftChanged || len(d.Fields) != holdfastv1.MaxDriftFields || d.Manager != "kubectl" ||
		d.Detection != holdfastv1.DriftDetectedByWatch || !d.DetectedTime.Time.Equal(now) {
		t.Fatalf("DetailOf(changed) = %+v", d)
	}
	d = DetailOf(Verdict{Drifted: true, Deleted: true, Author: Author{Manager: "someone"}}, now, holdfastv1.DriftDetectedByComparison)
	if d.Type != holdfastv1.DriftDeleted || d.Manager != "" || len(d.Fields) != 0 {
		t.Fatalf("DetailOf(deleted) = %+v", d)
	}
}

func TestDetailFor(t *testing.T) {
	compared := time.Date(2026, 11, 26, 16, 0, 0, 300, time.UTC)
	settings := RefOf(report("settings", "", holdfastv1.DriftChanged).ResourceRef)
	detail := func(d holdfastv1.DriftDetection, manager, rv string) holdfastv1.DriftDetail {
		return holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Detection: d, Manager: manager, ResourceVersion: rv}
	}
	record := func(name string, d holdfastv1.DriftDetail) holdfastv1.DriftRecord {
		r := report(name, "", holdfastv1.DriftChanged)
		r.DriftDetail = d
		return r
	}
	last := detail(holdfastv1.DriftDetectedByWatch, "last", "20")
	records := []holdfastv1.DriftRecord{ // newest first
		record("other", detail(holdfastv1.DriftDetectedByWatch, "other-object", "31")),
		record("settings", detail(holdfastv1.DriftDetectedByWatch, "newer-record", "30")),
		record("settings", detail(holdfastv1.DriftDetectedByComparison, "older-record", "30")),
		record("settings", detail(holdfastv1.DriftDetectedByWatch, "no-version", "")),
	}
	reported := []holdfastv1.DriftRecord{ // oldest first
		record("settings", detail(holdfastv1.DriftDetectedByWatch, "first-report", "40")),
		record("settings", detail(holdfastv1.DriftDetectedByWatch, "second-report", "41")),
		record("other", detail(holdfastv1.DriftDetectedByWatch, "other-report", "42")),
	}
	for _, c := range []struct {
		what     string
		v        Verdict
		reported []holdfastv1.DriftRecord
		last     *holdfastv1.DriftDetail
		// want is the manager of the detail returned, "" for a new one.
		want string
	}{
		{"the newest report of the object", Verdict{Drifted: true, ResourceVersion: "30"}, reported, &last, "second-report"},
		{"reports of other objects only", Verdict{Drifted: true, ResourceVersion: "30"}, reported[2:], &last, "last"},
		{"the drift the status entry holds", Verdict{Drifted: true, ResourceVersion: "30"}, nil, &last, "last"},
		{"the newest record of the version", Verdict{Drifted: true, ResourceVersion: "30"}, nil, nil, "newer-record"},
		{"a version no record holds", Verdict{Drifted: true, ResourceVersion: "32"}, nil, nil, ""},
		{"another object's version", Verdict{Drifted: true, ResourceVersion: "31"}, nil, nil, ""},
		{"no version", Verdict{Drifted: true, Author: Author{Manager: "kubectl-edit"}}, nil, nil, ""},
	} {
		d, isNew := DetailFor(settings, c.v, compared, c.reported, c.last, records)
		switch {
		case c.want != "" && (isNew || d.Manager != c.want):
			t.Errorf("%s: new %v, detail %+v; want the one of %s", c.what, isNew, d, c.want)
		case c.want == "" && (!isNew || d.Detection != holdfastv1.DriftDetectedByComparison || !d.DetectedTime.Time.Equal(compared) ||
			d.Manager != c.v.Author.Manager || d.ResourceVersion != c.v.ResourceVersion):
			t.Errorf("%s: new %v, detail %+v; want a new one, detected by comparison at %s", c.what, isNew, d, compared)
		}
	}
	if d, _ := DetailFor(settings, Verdict{Drifted: true}, compared, nil, &last, nil); d != &last {
		t.Error("the drift the status entry holds is not returned as it is")
	}
}

func TestRecord(t *testing.T) {
	now := time.Date(2026, 11, 26, 16, 0, 0, 0, time.UTC)
	done := metav1.NewMicroTime(now.Add(-time.Hour))
	rec := func(name string, corrected bool) holdfastv1.DriftRecord {
		r := report(name, "", holdfastv1.DriftChanged)
		if corrected {
			r.CorrectedTime, r.Resolution = &done, holdfastv1.DriftCorrected
		}
		return r
	}
	ref := func(name string) Ref { return RefOf(rec(name, false).ResourceRef) }
	entry := func(name string, state holdfastv1.ResourceState) holdfastv1.ResourceStatus {
		return holdfastv1.ResourceStatus{ResourceRef: rec(name, false).ResourceRef, State: state}
	}
	alice := holdfastv1.ChangeAuthor{Manager: "kubectl-edit", User: "alice"}
	many := func(prefix string, n int) []holdfastv1.DriftRecord {
		var out []holdfastv1.DriftRecord
		for i := range n {
			out = append(out, rec(fmt.Sprintf("%s%02d", prefix, i), false))
		}
		return out
	}
	for _, c := range []struct {
		what          string
		records, seen []holdfastv1.DriftRecord
		back          PutBack
		// want is each record as name:resolution, "-" for none, and "@" when marked at now.
		want      []string
		fresh     int
		corrected []int
	}{
		{what: "nothing seen or put back", records: []holdfastv1.DriftRecord{rec("a", false)}},
		{what: "seen: newest first, before the records", records: []holdfastv1.DriftRecord{rec("a", false)},
			seen: []holdfastv1.DriftRecord{rec("b", false), rec("c", false)}, want: []string{"c:-", "b:-", "a:-"}, fresh: 2},
		{what: "a correction marks new and old records of the object, not those marked already",
			records: []holdfastv1.DriftRecord{rec("a", false), rec("b", false), rec("a", true)},
			seen:    []holdfastv1.DriftRecord{rec("a", false)},
			back:    PutBack{Corrected: map[Ref]bool{ref("a"): true}},
			want:    []string{"a:Corrected@", "a:Corrected@", "b:-", "a:Corrected"}, fresh: 1, corrected: []int{0, 1}},
		{what: "a deploy marks what it left InSync",
			records: []holdfastv1.DriftRecord{rec("a", false), rec("b", false)},
			back:    PutBack{Deployed: []holdfastv1.ResourceStatus{entry("a", holdfastv1.ResourceInSync), entry("b", holdfastv1.ResourceDrifted)}},
			want:    []string{"a:Corrected@", "b:-"}, corrected: []int{0}},
		{what: "a deploy that left nothing InSync marks nothing",
			records: []holdfastv1.DriftRecord{rec("a", false)},
			back:    PutBack{Deployed: []holdfastv1.ResourceStatus{entry("a", holdfastv1.ResourceDrifted)}}},
		{what: "restored by someone else, not marked corrected",
			records: []holdfastv1.DriftRecord{rec("a", false), rec("b", true)},
			back:    PutBack{Corrected: map[Ref]bool{ref("a"): true, ref("b"): true}, Restored: map[Ref]holdfastv1.ChangeAuthor{ref("a"): alice, ref("b"): alice}},
			want:    []string{"a:Restored@alice", "b:Corrected"}},
		{what: "bounded, newest kept", records: many("old", holdfastv1.MaxDriftRecords), seen: many("new", 2),
			// old17 is the last record kept; old18 is past the bound.
			back: PutBack{Corrected: map[Ref]bool{ref("old17"): true, ref("old18"): true}},
			want: append([]string{"new01:-", "new00:-"}, func() []string {
				var out []string
				for i := range holdfastv1.MaxDriftRecords - 3 {
					out = append(out, fmt.Sprintf("old%02d:-", i))
				}
				return append(out, "old17:Corrected@")
			}()...), fresh: 2, corrected: []int{holdfastv1.MaxDriftRecords - 1}},
		{what: "more seen than kept", seen: many("new", holdfastv1.MaxDriftRecords+1),
			want: func() []string {
				var out []string
				for i := holdfastv1.MaxDriftRecords; i > 0; i-- {
					out = append(out, fmt.Sprintf("new%02d:-", i))
				}
				return out
			}(), fresh: holdfastv1.MaxDriftRecords},
	} {
		h, ok := Record(c.records, c.seen, c.back, now)
		if ok != (c.want != nil) {
			t.Errorf("%s: made a history %v, want %v", c.what, ok, c.want != nil)
			continue
		}
		var got []string
		for _, d := range h.Drifts {
			s := d.Name + ":" + string(d.Resolution)
			if d.Resolution == "" {
				s += "-"
			}
			if d.CorrectedTime != nil && d.CorrectedTime.Time.Equal(now) {
				s += "@"
			}
			if d.RestoredBy != nil {
				s += d.RestoredBy.User
			}
			got = append(got, s)
		}
		if !slices.Equal(got, c.want) || h.Fresh != c.fresh || !slices.Equal(h.Corrected, c.corrected) {
			t.Errorf("%s: records %v, %d fresh, corrected %v; want %v, %d, %v", c.what, got, h.Fresh, h.Corrected, c.want, c.fresh, c.corrected)
		}
	}
}

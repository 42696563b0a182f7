package drift

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestCorrectionWindows(t *testing.T) {
	nightly := holdfastv1.CorrectionWindow{Start: "22:00", Duration: metav1.Duration{Duration: 4 * time.Hour}}
	weekdays := holdfastv1.CorrectionWindow{Start: "02:00", Duration: metav1.Duration{Duration: time.Hour}, Days: []holdfastv1.Weekday{"Monday"}}
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	cases := []struct {
		now      string
		windows  []holdfastv1.CorrectionWindow
		open     bool
		nextOpen string
	}{
		{"2026-11-23T23:00:00Z", []holdfastv1.CorrectionWindow{nightly}, true, "2026-11-24T22:00:00Z"},
		{"2026-11-24T01:59:00Z", []holdfastv1.CorrectionWindow{nightly}, true, "2026-11-24T22:00:00Z"}, // opened the day before
		{"2026-11-24T02:00:00Z", []holdfastv1.CorrectionWindow{nightly}, false, "2026-11-24T22:00:00Z"},
		// 2026-11-23 is a Monday.
		{"2026-11-23T02:30:00Z", []holdfastv1.CorrectionWindow{weekdays}, true, "2026-11-30T02:00:00Z"},
		{"2026-11-23T02:30:00+01:00", []holdfastv1.CorrectionWindow{weekdays}, false, "2026-11-23T02:00:00Z"}, // 01:30 UTC
		{"2026-11-24T02:30:00Z", []holdfastv1.CorrectionWindow{weekdays}, false, "2026-11-30T02:00:00Z"},      // Tuesday
		{"2026-11-23T02:30:00Z", []holdfastv1.CorrectionWindow{{Start: "02:00", Duration: metav1.Duration{Duration: 25 * time.Hour}}}, false, ""},
	}
	for _, c := range cases {
		now := at(c.now)
		if got := InWindow(c.windows, now); got != c.open {
			t.Errorf("InWindow(%s) = %v, want %v", c.now, got, c.open)
		}
		next := NextWindowStart(c.windows, now)
		want := time.Time{}
		if c.nextOpen != "" {
			want = at(c.nextOpen)
		}
		if !next.Equal(want) {
			t.Errorf("NextWindowStart(%s) = %v, want %v", c.now, next, want)
		}
	}
}

package clusterservicestatus

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
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
		if got := inWindow(c.windows, now); got != c.open {
			t.Errorf("inWindow(%s) = %v, want %v", c.now, got, c.open)
		}
		next := nextWindowStart(c.windows, now)
		want := time.Time{}
		if c.nextOpen != "" {
			want = at(c.nextOpen)
		}
		if !next.Equal(want) {
			t.Errorf("nextWindowStart(%s) = %v, want %v", c.now, next, want)
		}
	}
}

func TestPolicyFor(t *testing.T) {
	mcs := &holdfastv1.MultiClusterService{Spec: holdfastv1.MultiClusterServiceSpec{
		SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift: &holdfastv1.DriftPolicy{Action: holdfastv1.DriftActionReport,
			Ignore: []holdfastv1.IgnoreRule{
				{Paths: []string{"/spec/replicas"}, Target: &holdfastv1.ResourceSelector{Group: ptr.To("apps"), Kind: "Deployment", Name: "web-*"}},
				{Paths: []string{"/data/rotated"}, Target: &holdfastv1.ResourceSelector{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rotate": "yes"}}}},
				{Paths: []string{"no-slash"}},
			},
			Fight: &holdfastv1.FightPolicy{MaxCorrections: 2}},
	}}
	svc := holdfastv1.Service{Name: "api", Drift: &holdfastv1.ServiceDriftPolicy{Action: holdfastv1.DriftActionCorrect,
		Ignore: []holdfastv1.IgnoreRule{{Paths: []string{"/metadata/annotations/x"}}}}}
	p := policyFor(mcs, svc)
	if p.action != holdfastv1.DriftActionCorrect || !p.detect || p.fightMax != 2 || p.fightWindow != holdfastv1.DefaultFightWindow {
		t.Fatalf("policy = %+v", p)
	}
	if len(p.problems) != 1 || len(p.ignore) != 3 {
		t.Fatalf("problems %v, rules %d: want the rule without a leading / reported and the others kept", p.problems, len(p.ignore))
	}
	dep := &unstructured.Unstructured{}
	dep.SetAPIVersion("apps/v1")
	dep.SetKind("Deployment")
	dep.SetName("web-1")
	if got := p.ignoredPaths(dep); len(got) != 2 || got[0] != "/spec/replicas" || got[1] != "/metadata/annotations/x" {
		t.Fatalf("ignoredPaths(Deployment web-1) = %v", got)
	}
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName("web-1")
	cm.SetLabels(map[string]string{"rotate": "yes"})
	if got := p.ignoredPaths(cm); len(got) != 2 || got[0] != "/data/rotated" {
		t.Fatalf("ignoredPaths(ConfigMap) = %v", got)
	}
	if p.correctsNow(time.Now()) != true {
		t.Fatal("a service overriding the action with Correct does not correct")
	}
	if q := policyFor(mcs, holdfastv1.Service{Name: "other"}); q.correctsNow(time.Now()) {
		t.Fatal("Report without windows corrects")
	}
}

func TestFightsCountWithinTheWindow(t *testing.T) {
	var f fights
	k := fightKey{ref: apply.Ref{Kind: "ConfigMap", Name: "a"}}
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		if !f.correct(k, t0.Add(time.Duration(i)*time.Second), 3, time.Minute) {
			t.Fatalf("correction %d refused", i+1)
		}
	}
	if f.correct(k, t0.Add(10*time.Second), 3, time.Minute) {
		t.Fatal("a fourth correction within the window was allowed")
	}
	if !f.correct(k, t0.Add(2*time.Minute), 3, time.Minute) {
		t.Fatal("a correction after the window passed was refused")
	}
	f.forget(k)
	for i := 0; i < 3; i++ {
		if !f.correct(k, t0.Add(2*time.Minute), 3, time.Minute) {
			t.Fatal("counting did not restart after forget")
		}
	}
}

func TestFightsForgetObjectsNotCorrectedRecently(t *testing.T) {
	var f fights
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for i := range 100 {
		f.correct(fightKey{ref: apply.Ref{Kind: "ConfigMap", Name: fmt.Sprint("old-", i)}}, t0, 5, 10*time.Minute)
	}
	recent := fightKey{ref: apply.Ref{Kind: "ConfigMap", Name: "recent"}}
	f.correct(recent, t0.Add(5*time.Minute), 5, time.Minute) // a shorter window elsewhere
	if len(f.corrections) != 101 {
		t.Fatalf("%d objects remembered within the window, want 101", len(f.corrections))
	}
	f.correct(fightKey{ref: apply.Ref{Kind: "ConfigMap", Name: "new"}}, t0.Add(11*time.Minute), 5, 10*time.Minute)
	if len(f.corrections) != 2 {
		t.Fatalf("%d objects remembered after the longest window passed, want the recent one and the new one", len(f.corrections))
	}
	if _, ok := f.corrections[recent]; !ok {
		t.Fatal("an object corrected within the longest window was forgotten")
	}
}

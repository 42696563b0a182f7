package alerting

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/notify"
)

func alertRule(spec holdfastv1.AlertRuleSpec) *holdfastv1.AlertRule {
	return &holdfastv1.AlertRule{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "prod-errors", Generation: 1}, Spec: spec}
}

func serviceSet(labels map[string]string) *holdfastv1.MultiClusterService {
	return &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels}}
}

func driftOf(t notify.EventType, name, message string) notify.Event {
	return notify.Event{Type: t, MultiClusterService: "web", Cluster: types.NamespacedName{Namespace: "fleet", Name: "eu-1"},
		Object: holdfastv1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "web", Name: name}, Message: message}
}

func TestRuleSelects(t *testing.T) {
	prod := map[string]string{"env": "prod"}
	cases := []struct {
		name string
		spec holdfastv1.AlertRuleSpec
		set  map[string]string
		e    notify.Event
		want bool
	}{
		{"an empty rule sends everything", holdfastv1.AlertRuleSpec{}, nil, driftOf(notify.DriftCorrected, "a", ""), true},
		{"selector matches", holdfastv1.AlertRuleSpec{ServiceSetSelector: &metav1.LabelSelector{MatchLabels: prod}}, prod, driftOf(notify.DriftDetected, "a", ""), true},
		{"selector does not match", holdfastv1.AlertRuleSpec{ServiceSetSelector: &metav1.LabelSelector{MatchLabels: prod}}, map[string]string{"env": "dev"}, driftOf(notify.DriftDetected, "a", ""), false},
		{"kind selected", holdfastv1.AlertRuleSpec{EventTypes: []holdfastv1.AlertEventType{"Contested", "DriftDetected"}}, nil, driftOf(notify.DriftDetected, "a", ""), true},
		{"kind not selected", holdfastv1.AlertRuleSpec{EventTypes: []holdfastv1.AlertEventType{"Contested"}}, nil, driftOf(notify.DriftDetected, "a", ""), false},
		{"severity below the least", holdfastv1.AlertRuleSpec{Severity: "warning"}, nil, driftOf(notify.DriftCorrected, "a", ""), false},
		{"severity at the least", holdfastv1.AlertRuleSpec{Severity: "warning"}, nil, driftOf(notify.DriftDetected, "a", ""), true},
		{"severity above the least", holdfastv1.AlertRuleSpec{Severity: "warning"}, nil, driftOf(notify.CorrectionFailed, "a", ""), true},
		{"an exclusion matches the object", holdfastv1.AlertRuleSpec{Exclusions: []string{`ConfigMap web/canary-`}}, nil, driftOf(notify.DriftDetected, "canary-1", ""), false},
		{"an exclusion matches the message", holdfastv1.AlertRuleSpec{Exclusions: []string{`admission webhook .* denied`}}, nil, driftOf(notify.CorrectionFailed, "a", `admission webhook "x" denied the request`), false},
		{"no exclusion matches", holdfastv1.AlertRuleSpec{Exclusions: []string{`^Contested`}}, nil, driftOf(notify.DriftDetected, "a", ""), true},
		{"suspended", holdfastv1.AlertRuleSpec{Suspend: true}, nil, driftOf(notify.CorrectionFailed, "a", ""), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Compile(alertRule(tc.spec))
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Selects(serviceSet(tc.set), tc.e); got != tc.want {
				t.Errorf("Selects(%q) = %v, want %v", Describe(tc.e), got, tc.want)
			}
		})
	}
}

func TestCompileNamesWhatToFix(t *testing.T) {
	_, err := Compile(alertRule(holdfastv1.AlertRuleSpec{Exclusions: []string{"ok", "("}}))
	if !errors.Is(err, ErrInvalidExclusion) {
		t.Fatalf("an exclusion that is not a regular expression: %v, want ErrInvalidExclusion", err)
	}
	if want := "spec.exclusions[1]"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
	_, err = Compile(alertRule(holdfastv1.AlertRuleSpec{ServiceSetSelector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}}))
	if err == nil || !strings.Contains(err.Error(), "spec.serviceSetSelector") {
		t.Errorf("an invalid selector: %v, want an error naming spec.serviceSetSelector", err)
	}
}

func TestCompileRateLimit(t *testing.T) {
	r, err := Compile(alertRule(holdfastv1.AlertRuleSpec{}))
	if err != nil || r.window != DefaultRateLimit {
		t.Errorf("no rateLimit: window %v (%v), want %v", r.window, err, DefaultRateLimit)
	}
	r, err = Compile(alertRule(holdfastv1.AlertRuleSpec{RateLimit: &metav1.Duration{Duration: 0}}))
	if err != nil || r.window != 0 {
		t.Errorf("rateLimit 0s: window %v (%v), want 0", r.window, err)
	}
	r, err = Compile(alertRule(holdfastv1.AlertRuleSpec{RateLimit: &metav1.Duration{Duration: time.Minute}}))
	if err != nil || r.window != time.Minute {
		t.Errorf("rateLimit 1m: window %v (%v), want 1m", r.window, err)
	}
}

func TestLimiterSendsOnePerWindowAndCountsTheRest(t *testing.T) {
	l := newLimiter()
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	window := time.Minute
	steps := []struct {
		at       time.Duration
		key      string
		wantOK   bool
		wantHeld int
	}{
		{0, "a", true, 0},
		{time.Second, "a", false, 0},
		{2 * time.Second, "b", true, 0}, // another object is its own
		{30 * time.Second, "a", false, 0},
		{59 * time.Second, "a", false, 0},
		{61 * time.Second, "a", true, 3}, // the window is over: sent, with the three held back
		{62 * time.Second, "a", false, 0},
		{3 * time.Minute, "a", true, 1},
	}
	for _, s := range steps {
		ok, held := l.allow(s.key, t0.Add(s.at), window)
		if ok != s.wantOK || held != s.wantHeld {
			t.Errorf("at +%v %s: allow = %v, held %d; want %v, %d", s.at, s.key, ok, held, s.wantOK, s.wantHeld)
		}
	}
	for range 3 {
		if ok, _ := l.allow("c", t0, 0); !ok {
			t.Error("a window of 0 held an event back")
		}
	}
}

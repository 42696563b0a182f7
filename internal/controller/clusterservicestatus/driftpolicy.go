package clusterservicestatus

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
)

// driftPolicy is the drift handling in effect for one service.
type driftPolicy struct {
	// detect is true in ContinuousWithDriftDetection mode; otherwise drift is simply corrected
	// by the next full reconcile, as deployment always did.
	detect bool
	// optOut: the service opted out of drift handling.
	optOut  bool
	action  holdfastv1.DriftAction
	windows []holdfastv1.CorrectionWindow
	ignore  []ignoreRule
	// fightMax corrections of one object within fightWindow make it Contested.
	fightMax    int
	fightWindow time.Duration
	// problems are parts of the policy that cannot be used, each saying what to fix.
	problems []string
}

type ignoreRule struct {
	paths  []string
	target *holdfastv1.ResourceSelector
	labels labels.Selector
}

// policy returns the drift policy of one of the service set's services, resolved once per
// reconcile.
func (s *scope) policy(svc holdfastv1.Service) *driftPolicy {
	if p, ok := s.policies[svc.Name]; ok {
		return p
	}
	if s.policies == nil {
		s.policies = map[string]*driftPolicy{}
	}
	p := policyFor(s.mcs, svc)
	s.policies[svc.Name] = &p
	return &p
}

// policyFor resolves the drift policy of one service: the service set's, with the service's
// overrides.
func policyFor(mcs *holdfastv1.MultiClusterService, svc holdfastv1.Service) driftPolicy {
	p := driftPolicy{
		detect:      mcs.Spec.SyncMode == holdfastv1.SyncModeContinuousWithDriftDetection,
		action:      holdfastv1.DriftActionCorrect,
		fightMax:    holdfastv1.DefaultFightMaxCorrections,
		fightWindow: holdfastv1.DefaultFightWindow,
	}
	if d := mcs.Spec.Drift; d != nil {
		if d.Action != "" {
			p.action = d.Action
		}
		p.windows = d.CorrectionWindows
		p.addRules(d.Ignore, "spec.drift.ignore")
		if f := d.Fight; f != nil {
			if f.MaxCorrections > 0 {
				p.fightMax = int(f.MaxCorrections)
			}
			if f.Window != nil && f.Window.Duration > 0 {
				p.fightWindow = f.Window.Duration
			}
		}
	}
	if d := svc.Drift; d != nil {
		if d.Action != "" {
			p.action = d.Action
		}
		p.optOut = d.Disabled
		p.addRules(d.Ignore, fmt.Sprintf("service %q drift.ignore", svc.Name))
	}
	for i, w := range p.windows {
		if w.Duration.Duration <= 0 || w.Duration.Duration > 24*time.Hour {
			p.problems = append(p.problems, fmt.Sprintf("spec.drift.correctionWindows[%d]: duration must be more than 0 and at most 24h", i))
		}
	}
	return p
}

func (p *driftPolicy) addRules(rules []holdfastv1.IgnoreRule, where string) {
	for i, r := range rules {
		rule := ignoreRule{paths: r.Paths, target: r.Target, labels: labels.Everything()}
		bad := false
		for _, path := range r.Paths {
			if _, ok := apply.ParsePointer(path); !ok {
				p.problems = append(p.problems, fmt.Sprintf("%s[%d]: path %q is not a JSON pointer (start it with /)", where, i, path))
				bad = true
			}
		}
		if r.Target != nil && r.Target.LabelSelector != nil {
			sel, err := metav1.LabelSelectorAsSelector(r.Target.LabelSelector)
			if err != nil {
				p.problems = append(p.problems, fmt.Sprintf("%s[%d].target.labelSelector: %v", where, i, err))
				bad = true
			}
			rule.labels = sel
		}
		if !bad {
			p.ignore = append(p.ignore, rule)
		}
	}
}

// ignoredPaths returns the JSON pointers the ignore rules exempt in obj.
func (p *driftPolicy) ignoredPaths(obj *unstructured.Unstructured) []string {
	var out []string
	for _, r := range p.ignore {
		if r.matches(obj) {
			out = append(out, r.paths...)
		}
	}
	return out
}

func (r ignoreRule) matches(obj *unstructured.Unstructured) bool {
	t := r.target
	if t == nil {
		return true
	}
	gvk := obj.GroupVersionKind()
	switch {
	case t.Group != nil && *t.Group != gvk.Group,
		t.Kind != "" && t.Kind != gvk.Kind,
		t.Namespace != "" && t.Namespace != obj.GetNamespace(),
		t.Name != "" && !nameMatches(t.Name, obj.GetName()):
		return false
	}
	return r.labels.Matches(labels.Set(obj.GetLabels()))
}

func nameMatches(pattern, name string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(name, prefix)
	}
	return pattern == name
}

// correctsNow reports whether drift is corrected automatically at now: always with action
// Correct, inside a correction window with action Report.
func (p *driftPolicy) correctsNow(now time.Time) bool {
	return p.action != holdfastv1.DriftActionReport || inWindow(p.windows, now)
}

// inWindow reports whether now (taken in UTC) is inside one of the windows.
func inWindow(windows []holdfastv1.CorrectionWindow, now time.Time) bool {
	now = now.UTC()
	for _, w := range windows {
		// A window may have opened yesterday and still be open.
		for _, day := range []time.Time{now, now.AddDate(0, 0, -1)} {
			start, ok := windowStart(w, day)
			if ok && !now.Before(start) && now.Before(start.Add(w.Duration.Duration)) {
				return true
			}
		}
	}
	return false
}

// nextWindowStart returns when the next of the windows opens after now, or zero if none will.
func nextWindowStart(windows []holdfastv1.CorrectionWindow, now time.Time) time.Time {
	now = now.UTC()
	var next time.Time
	for _, w := range windows {
		for d := 0; d <= 7; d++ {
			start, ok := windowStart(w, now.AddDate(0, 0, d))
			if ok && start.After(now) {
				if next.IsZero() || start.Before(next) {
					next = start
				}
				break
			}
		}
	}
	return next
}

// windowStart returns when w opens on day's date, and false if it does not open that day or
// cannot be used.
func windowStart(w holdfastv1.CorrectionWindow, day time.Time) (time.Time, bool) {
	if w.Duration.Duration <= 0 || w.Duration.Duration > 24*time.Hour {
		return time.Time{}, false
	}
	var hh, mm int
	if _, err := fmt.Sscanf(w.Start, "%d:%d", &hh, &mm); err != nil {
		return time.Time{}, false
	}
	if len(w.Days) > 0 {
		open := false
		for _, d := range w.Days {
			if string(d) == day.Weekday().String() {
				open = true
			}
		}
		if !open {
			return time.Time{}, false
		}
	}
	y, m, d := day.Date()
	return time.Date(y, m, d, hh, mm, 0, 0, time.UTC), true
}

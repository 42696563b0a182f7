package drift

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fieldset"
)

// Policy is the drift handling in effect for one service: the service set's spec.drift with the
// service's overrides (PolicyFor).
type Policy struct {
	// Detect is true in ContinuousWithDriftDetection mode; otherwise drift is simply corrected
	// by the next full reconcile, as deployment always did.
	Detect bool
	// OptOut: the service opted out of drift handling.
	OptOut  bool
	Action  holdfastv1.DriftAction
	Windows []holdfastv1.CorrectionWindow
	// FightMax corrections of one object within FightWindow make it Contested. Then it is
	// corrected with an exponential backoff capped at FightMaxBackoff, or, with FightStop, not
	// until a manual request.
	FightMax        int
	FightWindow     time.Duration
	FightMaxBackoff time.Duration
	FightStop       bool
	// Recreate: drift only a re-creation can correct (immutable fields) is corrected by deleting
	// and re-creating the object; RecreateNamespacesAndCRDs extends that to Namespaces and CRDs.
	Recreate, RecreateNamespacesAndCRDs bool
	// Prevention is what the target's API server does about changes to the service's objects
	// (package admission); Off for a service that opted out.
	Prevention holdfastv1.PreventionMode
	// Problems are parts of the policy that cannot be used, each saying what to fix; the rest
	// applies.
	Problems []string

	ignore []ignoreRule
}

type ignoreRule struct {
	rule   holdfastv1.IgnoreRule
	paths  []string
	target *holdfastv1.ResourceSelector
	labels labels.Selector
}

// PolicyFor resolves the drift policy of one service: the service set's, with the service's
// overrides.
func PolicyFor(mcs *holdfastv1.MultiClusterService, svc holdfastv1.Service) Policy {
	p := Policy{
		Detect:          mcs.Spec.SyncMode == holdfastv1.SyncModeContinuousWithDriftDetection,
		Action:          holdfastv1.DriftActionCorrect,
		FightMax:        holdfastv1.DefaultFightMaxCorrections,
		FightWindow:     holdfastv1.DefaultFightWindow,
		FightMaxBackoff: holdfastv1.DefaultFightMaxBackoff,
		Prevention:      holdfastv1.PreventionOff,
	}
	if d := mcs.Spec.Drift; d != nil {
		if d.Prevention != "" {
			p.Prevention = d.Prevention
		}
		if d.Action != "" {
			p.Action = d.Action
		}
		p.Windows = d.CorrectionWindows
		p.addRules(d.Ignore, "spec.drift.ignore")
		if im := d.Immutable; im != nil {
			p.Recreate = im.Action == holdfastv1.ImmutableRecreate
			p.RecreateNamespacesAndCRDs = im.RecreateNamespacesAndCRDs
		}
		if f := d.Fight; f != nil {
			if f.MaxCorrections > 0 {
				p.FightMax = int(f.MaxCorrections)
			}
			if f.Window != nil && f.Window.Duration > 0 {
				p.FightWindow = f.Window.Duration
			}
			if f.MaxBackoff != nil && f.MaxBackoff.Duration > 0 {
				p.FightMaxBackoff = f.MaxBackoff.Duration
			}
			p.FightStop = f.Action == holdfastv1.FightStop
		}
	}
	if d := svc.Drift; d != nil {
		if d.Action != "" {
			p.Action = d.Action
		}
		p.OptOut = d.Disabled
		p.addRules(d.Ignore, fmt.Sprintf("service %q drift.ignore", svc.Name))
		if d.Prevention != "" {
			p.Prevention = d.Prevention
		}
	}
	if p.OptOut {
		p.Prevention = holdfastv1.PreventionOff
	}
	for i, w := range p.Windows {
		if problem := windowProblem(w); problem != "" {
			p.Problems = append(p.Problems, fmt.Sprintf("spec.drift.correctionWindows[%d]: %s", i, problem))
		}
	}
	return p
}

func (p *Policy) addRules(rules []holdfastv1.IgnoreRule, where string) {
	for i, r := range rules {
		rule := ignoreRule{rule: r, paths: r.Paths, target: r.Target, labels: labels.Everything()}
		bad := false
		for _, path := range r.Paths {
			if _, ok := fieldset.ParsePointer(path); !ok {
				p.Problems = append(p.Problems, fmt.Sprintf("%s[%d]: path %q is not a JSON pointer (start it with /)", where, i, path))
				bad = true
			}
		}
		if r.Target != nil && r.Target.LabelSelector != nil {
			sel, err := metav1.LabelSelectorAsSelector(r.Target.LabelSelector)
			if err != nil {
				p.Problems = append(p.Problems, fmt.Sprintf("%s[%d].target.labelSelector: %v", where, i, err))
				bad = true
			}
			rule.labels = sel
		}
		if !bad {
			p.ignore = append(p.ignore, rule)
		}
	}
}

// IgnoredPaths returns the JSON pointers the ignore rules exempt in obj.
func (p *Policy) IgnoredPaths(obj *unstructured.Unstructured) []string {
	var out []string
	for _, r := range p.ignore {
		if r.matches(obj) {
			out = append(out, r.paths...)
		}
	}
	return out
}

// IgnoreRules returns the ignore rules in effect (the service set's, then the service's), less
// those with a problem.
func (p *Policy) IgnoreRules() []holdfastv1.IgnoreRule {
	out := make([]holdfastv1.IgnoreRule, 0, len(p.ignore))
	for _, r := range p.ignore {
		out = append(out, r.rule)
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

// CorrectsNow reports whether drift is corrected automatically at now: always with action
// Correct, inside a correction window with action Report.
func (p *Policy) CorrectsNow(now time.Time) bool {
	return p.Action != holdfastv1.DriftActionReport || InWindow(p.Windows, now)
}

// Recreates reports whether drift in obj's immutable fields is corrected by deleting and
// re-creating it: only with action Recreate, and for a Namespace or a CustomResourceDefinition
// (whose deletion takes everything in it) only when RecreateNamespacesAndCRDs allows it.
func (p *Policy) Recreates(obj *unstructured.Unstructured) bool {
	if !p.Recreate {
		return false
	}
	if gvk := obj.GroupVersionKind(); Contains(gvk.Group, gvk.Kind) {
		return p.RecreateNamespacesAndCRDs
	}
	return true
}

// Contains reports whether objects of the kind hold other objects, which go with them when they
// are deleted: a Namespace its objects, a CustomResourceDefinition its custom resources.
func Contains(group, kind string) bool {
	return (group == "" && kind == "Namespace") || (group == "apiextensions.k8s.io" && kind == "CustomResourceDefinition")
}

// WaitsForWindows reports whether drift may wait for a correction window to open.
func (p *Policy) WaitsForWindows() bool {
	return p.Detect && p.Action == holdfastv1.DriftActionReport && len(p.Windows) > 0
}

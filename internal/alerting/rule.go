package alerting

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/notify"
)

// DefaultRateLimit is an AlertRule's window when spec.rateLimit is not set.
const DefaultRateLimit = 5 * time.Minute

// ErrInvalidExclusion is wrapped by Compile's errors about an exclusion.
var ErrInvalidExclusion = errors.New("invalid exclusion")

// Rule is an AlertRule compiled: what it selects, and where it sends.
type Rule struct {
	// Namespace and Name name the AlertRule.
	Namespace, Name string
	// Generation is the AlertRule's generation it was compiled from.
	Generation int64

	selector   labels.Selector
	types      []notify.EventType
	severity   notify.Severity
	exclusions []*regexp.Regexp
	summary    string
	window     time.Duration
	suspended  bool
	targets    []holdfastv1.AlertTarget
}

// Compile compiles an AlertRule. Its errors name the field at fault: a selector that does not
// parse, an exclusion that is not a regular expression (ErrInvalidExclusion).
func Compile(ar *holdfastv1.AlertRule) (*Rule, error) {
	r := &Rule{Namespace: ar.Namespace, Name: ar.Name, Generation: ar.Generation, severity: notify.Severity(ar.Spec.Severity),
		summary: ar.Spec.Summary, window: DefaultRateLimit, suspended: ar.Spec.Suspend, targets: ar.Spec.Targets}
	r.selector = labels.Everything()
	if ar.Spec.ServiceSetSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(ar.Spec.ServiceSetSelector)
		if err != nil {
			return nil, fmt.Errorf("spec.serviceSetSelector: %w", err)
		}
		r.selector = sel
	}
	for _, t := range ar.Spec.EventTypes {
		r.types = append(r.types, notify.EventType(t))
	}
	for i, x := range ar.Spec.Exclusions {
		re, err := regexp.Compile(x)
		if err != nil {
			return nil, fmt.Errorf("%w: spec.exclusions[%d]: %w", ErrInvalidExclusion, i, err)
		}
		r.exclusions = append(r.exclusions, re)
	}
	if ar.Spec.RateLimit != nil {
		r.window = max(ar.Spec.RateLimit.Duration, 0)
	}
	return r, nil
}

// Selects reports whether the rule sends e, an event of the service set mcs, leaving aside who
// may see mcs (tenancy) and the rate limit: not suspended, mcs matches the selector, e is of a
// selected kind and severity, and no exclusion matches its description.
func (r *Rule) Selects(mcs *holdfastv1.MultiClusterService, e notify.Event) bool {
	if r.suspended || !r.selector.Matches(labels.Set(mcs.Labels)) {
		return false
	}
	if len(r.types) > 0 && !slices.Contains(r.types, e.Type) {
		return false
	}
	if !e.Severity().AtLeast(r.severity) {
		return false
	}
	line := Describe(e)
	return !slices.ContainsFunc(r.exclusions, func(re *regexp.Regexp) bool { return re.MatchString(line) })
}

// Describe is the one line an event is known by to exclusions: its kind, service set, cluster,
// object and message. Secret values are redacted from it as from the event itself.
func Describe(e notify.Event) string {
	s := string(e.Type) + " " + e.MultiClusterService
	if e.Cluster.Name != "" {
		s += " " + e.Cluster.String()
	}
	if o := e.Object; o.Name != "" {
		name := o.Name
		if o.Namespace != "" {
			name = o.Namespace + "/" + o.Name
		}
		s += " " + o.Kind + " " + name
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

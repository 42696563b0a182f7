package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Getter is an object with conditions.
type Getter interface {
	client.Object
	GetConditions() []metav1.Condition
}

// Setter is an object whose conditions can be replaced.
type Setter interface {
	Getter
	SetConditions([]metav1.Condition)
}

// Set adds or updates a condition, stamping it with the object's generation. The transition time
// changes only when the status does.
func Set(obj Setter, c metav1.Condition) {
	c.ObservedGeneration = obj.GetGeneration()
	conds := obj.GetConditions()
	meta.SetStatusCondition(&conds, c)
	obj.SetConditions(conds)
}

// Get returns the condition of the given type, or nil.
func Get(obj Getter, conditionType string) *metav1.Condition {
	return meta.FindStatusCondition(obj.GetConditions(), conditionType)
}

// IsTrue reports whether the condition of the given type exists and is True.
func IsTrue(obj Getter, conditionType string) bool {
	return meta.IsStatusConditionTrue(obj.GetConditions(), conditionType)
}

// Summary says which conditions Ready looks at and which way round each is good.
type Summary struct {
	// Positive conditions are fine when True (for example Connected).
	Positive []string
	// Negative conditions are fine when False (for example Paused).
	Negative []string
}

// SetReady computes the Ready condition from the conditions named in s, in order: Ready is True
// when all are fine; otherwise it takes the reason and message of the first condition that is
// not, and is False, or Unknown when that condition is Unknown.
func SetReady(obj Setter, s Summary) {
	ready := s.ready(obj)
	Set(obj, ready)
	SetProgress(obj, ready)
}

// SetProgress sets the kstatus conditions from Ready: Stalled True when Ready is not True for a
// reason someone must fix (holdfastv1.StalledReasons), Reconciling True when it is not True for
// any other reason; both False when Ready is True or held on purpose (holdfastv1.HeldReasons).
func SetProgress(obj Setter, ready metav1.Condition) {
	stalled := metav1.Condition{Type: holdfastv1.StalledCondition, Status: metav1.ConditionFalse, Reason: ready.Reason}
	reconciling := metav1.Condition{Type: holdfastv1.ReconcilingCondition, Status: metav1.ConditionFalse, Reason: ready.Reason}
	switch {
	case ready.Status == metav1.ConditionTrue, holdfastv1.HeldReasons[ready.Reason]:
	case holdfastv1.StalledReasons[ready.Reason]:
		stalled.Status, stalled.Message = metav1.ConditionTrue, ready.Message
	default:
		reconciling.Status, reconciling.Message = metav1.ConditionTrue, ready.Message
	}
	Set(obj, stalled)
	Set(obj, reconciling)
}

func (s Summary) ready(obj Getter) metav1.Condition {
	check := func(t string, good metav1.ConditionStatus) *metav1.Condition {
		c := Get(obj, t)
		if c == nil {
			return &metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: holdfastv1.ProbingReason,
				Message: t + " is not known yet"}
		}
		if c.Status == good {
			return nil
		}
		return c
	}
	var blocking []*metav1.Condition
	for _, t := range s.Negative {
		if c := check(t, metav1.ConditionFalse); c != nil {
			blocking = append(blocking, c)
		}
	}
	for _, t := range s.Positive {
		if c := check(t, metav1.ConditionTrue); c != nil {
			blocking = append(blocking, c)
		}
	}
	if len(blocking) == 0 {
		return metav1.Condition{Type: holdfastv1.ReadyCondition, Status: metav1.ConditionTrue, Reason: holdfastv1.ReadyReason}
	}
	first := blocking[0]
	status := metav1.ConditionFalse
	if first.Status == metav1.ConditionUnknown {
		status = metav1.ConditionUnknown
	}
	// A negative condition that is True (Paused) blocks Ready with its own reason.
	reason := first.Reason
	if reason == "" {
		reason = holdfastv1.NotReadyReason
	}
	msg := first.Message
	if msg == "" {
		msg = first.Type + " is " + string(first.Status)
	}
	return metav1.Condition{Type: holdfastv1.ReadyCondition, Status: status, Reason: reason, Message: msg}
}

package notify

// Severity is how urgent an event is, for receivers that page (PagerDuty, Opsgenie,
// Alertmanager) and for alert rules that select by it.
type Severity string

// Severities, from the least urgent.
const (
	// SeverityInfo: Holdfast did what it is there for (a drift put back, a rollout done).
	SeverityInfo Severity = "info"
	// SeverityWarning: something changed that a person may want to look at (a drift left
	// waiting in Report mode).
	SeverityWarning Severity = "warning"
	// SeverityError: Holdfast cannot keep the fleet as declared without someone's help.
	SeverityError Severity = "error"
)

// severities orders Severity values; AtLeast compares by it.
var severities = map[Severity]int{SeverityInfo: 0, SeverityWarning: 1, SeverityError: 2}

// AtLeast reports whether s is as urgent as min or more. An unknown min is SeverityInfo's.
func (s Severity) AtLeast(min Severity) bool { return severities[s] >= severities[min] }

// Severity is how urgent e is: an error when Holdfast could not keep what is declared (a
// correction refused, an object contested, a rollout halted, a cluster lost, objects unhealthy),
// a warning for a drift left waiting, info for what went as it should.
func (e Event) Severity() Severity {
	switch e.Type {
	case DriftCorrected, Resumed, RolloutProgressing, RolloutComplete:
		return SeverityInfo
	case DriftDetected:
		return SeverityWarning
	}
	return SeverityError
}

package notify

import "testing"

func TestSeverityOfEachEventType(t *testing.T) {
	want := map[EventType]Severity{
		DriftDetected: SeverityWarning, DriftCorrected: SeverityInfo, Contested: SeverityError,
		Resumed: SeverityInfo, CorrectionFailed: SeverityError, RolloutHalted: SeverityError,
		RolloutProgressing: SeverityInfo, RolloutComplete: SeverityInfo, ClusterUnreachable: SeverityError, Unhealthy: SeverityError,
	}
	if len(want) != len(EventTypes) {
		t.Fatalf("%d event types, %d with a severity here: add the new one", len(EventTypes), len(want))
	}
	for _, et := range EventTypes {
		if got := (Event{Type: et}).Severity(); got != want[et] {
			t.Errorf("Severity of %s = %s, want %s", et, got, want[et])
		}
	}
}

func TestSeverityAtLeast(t *testing.T) {
	cases := []struct {
		s, min Severity
		want   bool
	}{
		{SeverityError, SeverityWarning, true},
		{SeverityWarning, SeverityWarning, true},
		{SeverityInfo, SeverityWarning, false},
		{SeverityWarning, SeverityError, false},
		{SeverityInfo, "", true},
	}
	for _, c := range cases {
		if got := c.s.AtLeast(c.min); got != c.want {
			t.Errorf("%s.AtLeast(%s) = %v, want %v", c.s, c.min, got, c.want)
		}
	}
}

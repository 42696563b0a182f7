package drift

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestRespond(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	changed := Verdict{Drifted: true, Fields: []FieldChange{{Path: ".data.a"}}, Author: Author{Manager: "kubectl"}}
	deleted := Verdict{Drifted: true, Deleted: true}
	correct := Policy{Detect: true, Action: holdfastv1.DriftActionCorrect, FightMax: 2, FightWindow: time.Minute, FightMaxBackoff: time.Minute}
	report := Policy{Detect: true, Action: holdfastv1.DriftActionReport, FightMax: 2, FightWindow: time.Minute, FightMaxBackoff: time.Minute}
	stop := correct
	stop.FightStop = true
	inWindow := report
	inWindow.Windows = []holdfastv1.CorrectionWindow{{Start: "11:30", Duration: metav1.Duration{Duration: time.Hour}}}
	optOut := correct
	optOut.OptOut = true
	cases := []struct {
		name string
		pol  Policy
		v    Verdict
		sit  Situation
		// earlier corrections counted for the object
		earlier int
		want    Response
		message string
	}{
		{name: "opted out", pol: optOut, v: changed,
			want: Response{State: holdfastv1.ResourceIgnored}, message: "opted out"},
		{name: "only ignored fields changed", pol: report, v: Verdict{},
			want: Response{Correct: true}},
		{name: "Correct", pol: correct, v: changed,
			want: Response{Correct: true, Record: true, State: holdfastv1.ResourceInSync}},
		{name: "Report, changed", pol: report, v: changed,
			want: Response{Record: true, State: holdfastv1.ResourceDrifted}, message: "drift reported"},
		{name: "Report, deleted", pol: report, v: deleted,
			want: Response{Record: true, State: holdfastv1.ResourceMissing}, message: "drift reported"},
		{name: "Report, a requested correction was refused: stays refused", pol: report, v: deleted,
			sit:  Situation{Previous: holdfastv1.ResourceUncorrectable, PreviousMessage: "correction refused by the API server: field is immutable"},
			want: Response{Record: true, State: holdfastv1.ResourceUncorrectable}, message: "field is immutable"},
		{name: "Report inside a window", pol: inWindow, v: changed,
			want: Response{Correct: true, Record: true, State: holdfastv1.ResourceInSync}},
		{name: "Report, manual request", pol: report, v: changed, sit: Situation{Manual: true},
			want: Response{Correct: true, Record: true, State: holdfastv1.ResourceInSync}},
		{name: "Contested with Stop waits", pol: stop, v: changed, sit: Situation{Previous: holdfastv1.ResourceContested, PreviousMessage: "as before"},
			want: Response{Record: true, State: holdfastv1.ResourceContested}, message: "as before"},
		{name: "Contested with Backoff after a restart waits for the first backoff", pol: correct, v: changed,
			sit:  Situation{Previous: holdfastv1.ResourceContested, PreviousMessage: "as before"},
			want: Response{Record: true, State: holdfastv1.ResourceContested}, message: "next correction at 2026-11-23T12:00:10Z"},
		{name: "Contested resumes on request", pol: correct, v: changed, earlier: 2,
			sit:  Situation{Previous: holdfastv1.ResourceContested, Manual: true},
			want: Response{Correct: true, Record: true, State: holdfastv1.ResourceInSync}},
		{name: "corrected FightMax times: contested, next correction after the backoff", pol: correct, v: changed, earlier: 2, sit: Situation{Manager: "kubectl"},
			want:    Response{Record: true, State: holdfastv1.ResourceContested, Contested: true},
			message: "by field manager kubectl; next correction at 2026-11-23T12:00:09Z"},
		{name: "corrected FightMax times with Stop: contested, no more corrections", pol: stop, v: changed, earlier: 2, sit: Situation{Manager: "kubectl"},
			want: Response{Record: true, State: holdfastv1.ResourceContested, Contested: true}, message: "not corrected until a manual request"},
		{name: "fewer corrections: corrected", pol: correct, v: changed, earlier: 1,
			want: Response{Correct: true, Record: true, State: holdfastv1.ResourceInSync}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var f Fights
			c.sit.Key, c.sit.Service, c.sit.Now = ObjectKey{Kind: "ConfigMap", Name: "a"}, "web", now
			for i := range c.earlier {
				f.Decide(c.sit.Key, now.Add(-time.Duration(c.earlier-i)*time.Second), c.pol.fightRules(), false)
			}
			got := c.pol.Respond(c.v, c.sit, &f)
			msg := got.Message
			got.Message = ""
			if got != c.want || !strings.Contains(msg, c.message) {
				t.Fatalf("Respond = %+v (message %q), want %+v with a message containing %q", got, msg, c.want, c.message)
			}
		})
	}
}

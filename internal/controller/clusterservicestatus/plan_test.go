package clusterservicestatus

import "testing"

// TestPlan: what a reconcile does, for every branch of plan.
func TestPlan(t *testing.T) {
	tests := []struct {
		name string
		f    facts
		want step
	}{
		{name: "nothing at all", f: facts{}, want: stepWait},
		{name: "nothing, declarations from memory", f: facts{declarations: fromMemory, compared: true}, want: stepWait},
		{name: "periodic full reconcile due", f: facts{due: true}, want: stepFull},
		{name: "drifts, declarations from memory", f: facts{declarations: fromMemory, drifts: true}, want: stepCorrect},
		{name: "drifts, declarations from memory, full reconcile due", f: facts{declarations: fromMemory, drifts: true, due: true}, want: stepCorrectThenFull},
		{name: "drifts, declarations from memory, a namespace deleted", f: facts{declarations: fromMemory, drifts: true, containers: true}, want: stepFull},
		{name: "drifts, declarations rendered", f: facts{declarations: fromRendering, drifts: true}, want: stepFull},
		{name: "drifts ahead of new inputs", f: facts{declarations: asDeployed, drifts: true}, want: stepCorrectThenFull},
		{name: "drifts ahead of new inputs, full reconcile due", f: facts{declarations: asDeployed, drifts: true, due: true}, want: stepCorrectThenFull},
		{name: "no drift left as deployed", f: facts{declarations: asDeployed, due: true}, want: stepFull},
		{name: "declaration changed", f: facts{declarations: fromRendering, changed: true}, want: stepFull},
		{name: "drifts, declaration changed", f: facts{declarations: fromMemory, drifts: true, changed: true}, want: stepFull},
		{name: "drifts, last apply failed", f: facts{declarations: fromMemory, drifts: true, unsettled: true}, want: stepFull},
		{name: "drifts, recheck asked for", f: facts{declarations: fromMemory, drifts: true, recheck: true}, want: stepFull},
		{name: "drifts, comparison due", f: facts{declarations: fromMemory, drifts: true, compare: true}, want: stepFull},
		{name: "drifts, reconcile requested", f: facts{declarations: fromMemory, drifts: true, requested: true}, want: stepFull},
		{name: "drifts, health pending", f: facts{declarations: fromMemory, drifts: true, healthPending: true}, want: stepFull},
		{name: "recheck alone", f: facts{declarations: fromMemory, recheck: true}, want: stepFull},
		{name: "health pending alone", f: facts{declarations: fromMemory, healthPending: true}, want: stepFull},
		{name: "set changed is known through changed", f: facts{declarations: fromMemory, setChanged: true}, want: stepWait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := plan(tt.f); got != tt.want {
				t.Errorf("plan(%+v) = %s, want %s", tt.f, got, tt.want)
			}
		})
	}
}

// TestMayCorrectAheadOfNewInputs: drifts seen while a new revision rolls out are put back
// against the declarations as deployed only when nothing else asks for a full reconcile's
// judgement.
func TestMayCorrectAheadOfNewInputs(t *testing.T) {
	ok := facts{compared: true}
	tests := []struct {
		name string
		f    facts
		want bool
	}{
		{name: "compared before, nothing else", f: ok, want: true},
		{name: "full reconcile due", f: facts{compared: true, due: true}, want: true},
		{name: "never compared in this process", f: facts{}},
		{name: "a namespace deleted", f: facts{compared: true, containers: true}},
		{name: "reconcile requested", f: facts{compared: true, requested: true}},
		{name: "service set changed", f: facts{compared: true, setChanged: true}},
		{name: "last apply failed", f: facts{compared: true, unsettled: true}},
		{name: "recheck asked for", f: facts{compared: true, recheck: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.mayCorrectAheadOfNewInputs(); got != tt.want {
				t.Errorf("mayCorrectAheadOfNewInputs(%+v) = %v, want %v", tt.f, got, tt.want)
			}
		})
	}
}

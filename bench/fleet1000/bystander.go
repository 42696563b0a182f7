package main

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"holdfast.dev/holdfast/internal/measure"
)

// With -bystander (issue 28: "corrections slow down while a rollout runs elsewhere") the fleet
// has one more simulated cluster, the bystander, labelled roleLabel=bystander. The service set
// "fleet" selects every simulated cluster but it; the service set "bystander" selects only it,
// with a template of its own holding the same objects that the template change does not touch.
// Every Holdfast edit, at rest and during the template change, is made on the bystander: a
// correction on a cluster the rollout does not concern, whose only competition is the rollout's
// work in the same controller. The goal: its median during the template change ≤ goalRatio× its
// median at rest in the same run. The ideal corrector's edits are made on the bystander's API
// server, as without the flag; its own median during ÷ at rest shows what the machine alone
// costs (the rollout's load on the same API servers and CPUs).
const (
	roleLabel    = "bench.holdfast.dev/role"
	bystanderSet = "bystander"
)

// bystanderLabels labels the last of n+1 simulated clusters the bystander.
func bystanderLabels(n int) func(i int) map[string]string {
	return func(i int) map[string]string {
		if i == n {
			return map[string]string{roleLabel: bystanderSet}
		}
		return nil
	}
}

// fleetSelector selects the simulated clusters that the template change reaches: all of them, or
// with a bystander all but it.
func fleetSelector(bystander bool) metav1.LabelSelector {
	s := metav1.LabelSelector{MatchLabels: map[string]string{measure.SimFleetLabel: measure.SimFleetValue}}
	if bystander {
		s.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: roleLabel, Operator: metav1.LabelSelectorOpDoesNotExist}}
	}
	return s
}

func bystanderSelector() metav1.LabelSelector {
	return metav1.LabelSelector{MatchLabels: map[string]string{roleLabel: bystanderSet}}
}

// printBystander prints the medians during the template change over those at rest, Holdfast's
// (on the bystander) against the goal and the ideal corrector's.
func (r *result) printBystander() {
	hd, hr, hratio := percentileRatio(r.rollHoldfast, r.restHoldfast, 50)
	id, ir, iratio := percentileRatio(r.rollIdeal, r.restIdeal, 50)
	fmt.Printf("Bystander, median correction during the template change ÷ at rest: Holdfast %s ÷ %s = %.2f× (goal ≤ %d×: %s); ideal corrector %s ÷ %s = %.2f×.\n\n",
		measure.Millis(hd), measure.Millis(hr), hratio, goalRatio, met(hratio > 0 && hratio <= goalRatio), measure.Millis(id), measure.Millis(ir), iratio)
}

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/measure"
)

// outage stops the hub's API server for o.outage, editing both correctors' objects meanwhile,
// spread over it (at most holdfastv1.MaxDriftRecords rounds: what the agent keeps unwritten per
// status object, and what its history holds), then starts it again and waits until every edit
// the agent corrected meanwhile is recorded on the hub.
func (f *pullFleet) outage(ctx context.Context, o options, rounds *editRounds, ideal *measure.Ideal) error {
	_, countBefore, err := f.drifts(ctx)
	if err != nil {
		return err
	}
	n := min(o.edits, holdfastv1.MaxDriftRecords)
	fmt.Fprintf(os.Stderr, "Stopping the hub's API server for %s; %d rounds of edits meanwhile\n", o.outage, n)
	if err := f.hubPlane.StopAPIServer(); err != nil {
		return err
	}
	stopped := time.Now()
	slot := o.outage / time.Duration(n)
	var agentRuns, idealRuns []*measure.EditRun
	for i := range n {
		a, id := rounds.run(ctx, 1, nil)
		agentRuns, idealRuns = append(agentRuns, a...), append(idealRuns, id...)
		if wait := time.Until(stopped.Add(time.Duration(i+1) * slot)); wait > 0 {
			time.Sleep(wait)
		}
	}
	if err := f.hubPlane.StartAPIServer(ctx); err != nil {
		return err
	}
	back := time.Now()
	fmt.Fprintf(os.Stderr, "The hub's API server is back after %s\n", back.Sub(stopped).Round(time.Second))
	report("hub's API server stopped", agentRuns, idealRuns, ideal)

	// Every edit the agent saw corrected, by its value: "edited-<seq>".
	want := map[string]string{}
	for _, e := range agentRuns {
		if e.Err == nil && !e.Corrected.IsZero() {
			want[e.Name+"/"+e.Value] = e.Name
		}
	}
	var arrived time.Time
	var found int
	deadline := back.Add(2 * time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		records, _, err := f.drifts(ctx)
		if err == nil {
			found = 0
			for key := range want {
				name, value, _ := strings.Cut(key, "/")
				if recorded(records, name, value) {
					found++
				}
			}
			if found == len(want) {
				arrived = time.Now()
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, countAfter, _ := f.drifts(ctx)
	fmt.Printf("outage of %s: %d edits corrected on the Pull cluster while the hub was away; %d of them recorded on the hub after its return",
		back.Sub(stopped).Round(time.Second), len(want), found)
	if !arrived.IsZero() {
		after := arrived.Sub(back)
		fmt.Printf(", the last %s after it answered again (goal <= %s: %s)", after.Round(time.Millisecond), recordGoal, met(after <= recordGoal))
	}
	fmt.Printf("; status.driftCount grew by %d\n", countAfter-countBefore)
	fmt.Printf("none lost: %s\n", met(found == len(want)))
	return nil
}

// recorded reports whether records hold a drift of ConfigMap name to value.
func recorded(records []holdfastv1.DriftRecord, name, value string) bool {
	for _, d := range records {
		if d.Name != name {
			continue
		}
		for _, fc := range d.Fields {
			if fc.New == fmt.Sprintf("%q", value) {
				return true
			}
		}
	}
	return false
}

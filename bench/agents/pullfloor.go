package main

import (
	"context"
	"fmt"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// floorRun is how long the pull floor took and the CPU time used meanwhile.
type floorRun struct {
	took time.Duration
	cpu  cpuTimes
}

// pullFloor measures the pull floor of revision rev (measure.IdealAgents): an ideal agent per
// cluster, started with its watches open before the measurement (one of its work Secret on the
// hub, one of its objects on its cluster); then each cluster's objects (b.manifests, as
// measure.IdealObjects renames them) published in its Secret with the controller's number of
// workers while the agents apply them and each writes one status on the hub. It takes from the
// start of publishing until the last status was written, and then checks what the agents left
// (measure.IdealAgents.Check). The agents and their watches end with it; their objects, Secrets
// and statuses stay, under names and a label of their own that nothing else selects.
func (b *bench) pullFloor(ctx context.Context, rev int) (floorRun, error) {
	var run floorRun
	objs, err := measure.IdealObjects(b.manifests(rev))
	if err != nil {
		return run, err
	}
	agents, err := b.StartIdealAgents(ctx, b.Sims)
	if err != nil {
		return run, fmt.Errorf("pull floor of revision %d: %w", rev, err)
	}
	defer agents.Stop()
	timed, cancel := context.WithTimeout(ctx, b.cfg.timeout)
	defer cancel()
	round := fmt.Sprint("revision ", rev)
	cpu0 := b.cpu()
	if run.took, err = agents.Rollout(timed, objs, b.cfg.concurrency, round); err != nil {
		return run, fmt.Errorf("pull floor of revision %d: %w", rev, err)
	}
	run.cpu = b.cpu().minus(cpu0)
	if err := agents.Check(ctx, objs, round); err != nil {
		return run, fmt.Errorf("pull floor of revision %d: %w", rev, err)
	}
	return run, nil
}

// rows adds the floor's rows to t: its time and the CPU time used during it.
func (f floorRun) rows(t *measure.Table, what string) {
	t.Row(what+": publish, watches, applies, status writes", measure.Seconds(f.took))
	t.Row("… CPU during it: this process (the ideal agents) / hub / targets / Holdfast's agents", fmt.Sprintf("%s / %s", f.cpu.CPUTimes, measure.Seconds(f.cpu.Agents)))
}

package main

import (
	"context"
	"fmt"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// idealRollout applies the template's objects at revision rev (b.manifests, as
// measure.IdealObjects renames them, without fleetLabel) to every simulated cluster with the
// controller's number of workers (measure.SimFleet.IdealRollout). It returns the wall time until
// the last apply returned and the CPU time used meanwhile.
func (b *bench) idealRollout(ctx context.Context, rev int) (time.Duration, measure.CPUTimes, error) {
	objs, err := measure.IdealObjects(b.manifests(rev), fleetLabel)
	if err != nil {
		return 0, measure.CPUTimes{}, err
	}
	cpu0 := b.CPU()
	took, err := b.IdealRollout(ctx, b.Sims, objs, b.cfg.concurrency)
	if err != nil {
		return 0, measure.CPUTimes{}, fmt.Errorf("revision %d: %w", rev, err)
	}
	return took, b.CPU().Minus(cpu0), nil
}

// idealController rolls the template's objects at revision rev out as the ideal controller
// (measure.SimFleet.IdealController: one label-selected watch per cluster, the applies, one
// status write per cluster on the hub) with the controller's number of workers. It returns the
// wall time and the CPU time used meanwhile.
func (b *bench) idealController(ctx context.Context, rev int) (time.Duration, measure.CPUTimes, error) {
	objs, err := measure.IdealObjects(b.manifests(rev), fleetLabel)
	if err != nil {
		return 0, measure.CPUTimes{}, err
	}
	cpu0 := b.CPU()
	took, err := b.IdealController(ctx, b.Sims, objs, b.cfg.concurrency, fmt.Sprint("revision ", rev))
	if err != nil {
		return 0, measure.CPUTimes{}, fmt.Errorf("revision %d: %w", rev, err)
	}
	return took, b.CPU().Minus(cpu0), nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/naming"
)

// statusName is the status object of the service set on sim.
func statusName(sim string) string { return naming.StatusName(setName, sim) }

func templateRef() holdfastv1.TemplateReference {
	return holdfastv1.TemplateReference{Namespace: templateNamespace, Name: templateName}
}

// manifests is the template at revision rev (measure.SimManifests): objects-3 ConfigMaps, two
// Secrets and a ServiceAccount, in the simulated cluster's namespace.
func (b *bench) manifests(rev int) string {
	names := make([]string, b.cfg.objects-3)
	for i := range names {
		names[i] = fmt.Sprintf("config-%02d", i)
	}
	return measure.SimManifests(names, rev, "", "")
}

// waitClustersReady waits until every simulated Cluster is Ready (measure.SimFleet), and gives up
// when the agents end.
func (b *bench) waitClustersReady(ctx context.Context) error {
	if b.agents != nil {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		go func() {
			select {
			case <-b.agents.exited:
				cancel(b.agents.ended())
			case <-ctx.Done():
			}
		}()
	}
	if err := b.WaitClustersReady(ctx, b.cfg.timeout); err != nil {
		return errors.Join(err, context.Cause(ctx))
	}
	return nil
}

// startPull registers the Pull clusters and starts their agents, in a process of their own or,
// with agentsInProcess, in this one.
func (b *bench) startPull(ctx context.Context) (*agentsProcess, error) {
	began := time.Now()
	specs, err := b.registerPull(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "pull mode: %d Pull clusters registered in %s; starting their agents\n", len(specs), time.Since(began).Round(time.Millisecond))
	if b.cfg.agentsInProcess {
		b.agents = startAgentsHere(ctx, specs)
	} else if b.agents, err = startAgents(ctx, b.Fleet.Dir, specs); err != nil {
		return nil, err
	}
	return b.agents, nil
}

// cpuTimes is measure.CPUTimes and the agents' process's.
type cpuTimes struct {
	measure.CPUTimes
	Agents time.Duration
}

func (b *bench) cpu() cpuTimes {
	c := cpuTimes{CPUTimes: b.CPU()}
	if b.agents != nil && b.agents.cmd != nil {
		c.Agents, _ = measure.CPUTime(b.agents.pid())
	}
	return c
}

func (c cpuTimes) minus(o cpuTimes) cpuTimes {
	return cpuTimes{CPUTimes: c.CPUTimes.Minus(o.CPUTimes), Agents: c.Agents - o.Agents}
}

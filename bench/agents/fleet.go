package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
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

// waitClustersReady waits until every simulated Cluster is Ready, in whichever namespace (a
// Pull cluster has its own).
func (b *bench) waitClustersReady(ctx context.Context) error {
	ready := 0
	err := wait.PollUntilContextTimeout(ctx, time.Second, b.cfg.timeout, true, func(ctx context.Context) (bool, error) {
		if b.agents != nil {
			if err := b.agents.ended(); err != nil {
				return false, err
			}
		}
		list := &holdfastv1.ClusterList{}
		if err := b.Hub.List(ctx, list, client.MatchingLabels{measure.SimFleetLabel: measure.SimFleetValue}); err != nil {
			return false, nil //nolint:nilerr // the hub may be busy; keep polling until the timeout
		}
		ready = 0
		for i := range list.Items {
			if conditions.IsTrue(&list.Items[i], holdfastv1.ReadyCondition) {
				ready++
			}
		}
		return ready == len(b.Sims), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the Clusters to become Ready (%d of %d): %w", ready, len(b.Sims), err)
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

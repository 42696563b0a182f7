package demo

import (
	"context"
	"fmt"
	"sort"
	"strings"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
)

// waitHealthy waits until every service set's Healthy condition is True — each cluster's objects
// healthy as kstatus computes them: the Deployments Available once kwok runs their pods — and
// prints each set's Healthy message as it changes.
func (d *serviceDemo) waitHealthy(ctx context.Context) error {
	if err := d.poll(ctx, func(ctx context.Context) (bool, string, error) {
		_, sets, err := d.readStatuses(ctx)
		if err != nil {
			return false, "", err
		}
		names := make([]string, 0, len(sets))
		for name := range sets {
			names = append(names, name)
		}
		sort.Strings(names)
		done := true
		var progress []string
		for _, name := range names {
			m := sets[name]
			c := conditions.Get(m, holdfastv1.HealthyCondition)
			state := "no Healthy condition yet"
			if c != nil {
				state = fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
			}
			if !conditions.IsTrue(m, holdfastv1.HealthyCondition) && m.Status.MatchingClusters > 0 {
				done = false
			}
			progress = append(progress, name+": "+state)
		}
		return done, strings.Join(progress, "; "), nil
	}); err != nil {
		return err
	}
	fmt.Fprintln(d.out, "Every service set Healthy: each object on each cluster is Current (kstatus)")
	return nil
}

package demo

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/naming"
)

// reportThenCorrect switches the apps service set to drift action Report, changes a value as
// another field manager, shows it reported and left alone (with the CLI's `holdfast drift`),
// then asks for the correction with `holdfast correct --wait` and shows `holdfast history`.
func (d *serviceDemo) reportThenCorrect(ctx context.Context, timed func(string, time.Time)) error {
	cluster := d.clusters[0].Name
	c := d.targets[cluster]
	statusKey := client.ObjectKey{Namespace: d.f.Namespace, Name: naming.StatusName(appsSet, cluster)}
	if err := d.setDriftAction(ctx, holdfastv1.DriftActionReport); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "MultiClusterService %s: spec.drift.action set to %s: drift is recorded and notified, and corrected only on request\n", appsSet, holdfastv1.DriftActionReport)
	fmt.Fprintf(d.out, "(or inside spec.drift.correctionWindows, e.g. 02:00-04:00 UTC).\n\n")

	web := client.ObjectKey{Namespace: demoAppNamespace, Name: webSettingsName}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, web, cm); err != nil {
		return fmt.Errorf("reading ConfigMap %s on %s: %w", web, cluster, err)
	}
	declared := cm.Data["logLevel"]
	cm.Data["logLevel"] = "debug-by-hand"
	start := time.Now()
	if err := c.Update(ctx, cm, client.FieldOwner(editManager)); err != nil {
		return fmt.Errorf("editing ConfigMap %s on %s: %w", web, cluster, err)
	}
	fmt.Fprintf(d.out, "ConfigMap %s: data.logLevel %q -> %q by %s\n", web, declared, "debug-by-hand", editManager)
	css := &holdfastv1.ClusterServiceStatus{}
	if err := wait.PollUntilContextTimeout(ctx, driftPoll, driftTimeout, true, func(ctx context.Context) (bool, error) {
		if err := d.hub.Get(ctx, statusKey, css); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return css.Status.DriftedCount > 0, nil
	}); err != nil {
		return fmt.Errorf("waiting for %s to report the drift: %w", statusKey, err)
	}
	timed("Drift reported (Report mode)", start)
	fmt.Fprintf(d.out, "  reported after %s; still %q on the cluster. `holdfast drift` says:\n\n", fleetview.RoundDuration(time.Since(start)), "debug-by-hand")
	if err := d.cli(ctx, "drift"); err != nil {
		return err
	}

	fmt.Fprintf(d.out, "\nA human decides to put it back: `holdfast correct %s --cluster %s --wait`\n\n", appsSet, cluster)
	start = time.Now()
	if err := d.cli(ctx, "correct", appsSet, "--cluster", d.f.Namespace+"/"+cluster, "--wait", "--timeout", "30s"); err != nil {
		return err
	}
	if err := c.Get(ctx, web, cm); err != nil {
		return fmt.Errorf("reading ConfigMap %s on %s: %w", web, cluster, err)
	}
	if cm.Data["logLevel"] != declared {
		return fmt.Errorf("ConfigMap %s on %s: data.logLevel is %q after the correction, want %q", web, cluster, cm.Data["logLevel"], declared)
	}
	timed("Manual correction (holdfast correct --wait)", start)
	fmt.Fprintf(d.out, "\ndata.logLevel is %q again. `holdfast history --cluster %s --limit 6`:\n\n", declared, cluster)
	return d.cli(ctx, "history", "--cluster", d.f.Namespace+"/"+cluster, "--limit", "6")
}

// setDriftAction patches the apps service set's drift action.
func (d *serviceDemo) setDriftAction(ctx context.Context, action holdfastv1.DriftAction) error {
	return d.patchDrift(ctx, func(p *holdfastv1.DriftPolicy) { p.Action = action })
}

// patchDrift patches the apps service set's drift policy.
func (d *serviceDemo) patchDrift(ctx context.Context, mutate func(*holdfastv1.DriftPolicy)) error {
	m := &holdfastv1.MultiClusterService{}
	if err := d.hub.Get(ctx, client.ObjectKey{Name: appsSet}, m); err != nil {
		return fmt.Errorf("reading MultiClusterService %s: %w", appsSet, err)
	}
	before := m.DeepCopy()
	if m.Spec.Drift == nil {
		m.Spec.Drift = &holdfastv1.DriftPolicy{}
	}
	mutate(m.Spec.Drift)
	if err := d.hub.Patch(ctx, m, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("setting the drift policy of MultiClusterService %s: %w", appsSet, err)
	}
	return nil
}

// cli runs one of holdfast's own CLI verbs against the hub, printing to the demo's output.
func (d *serviceDemo) cli(ctx context.Context, verb string, args ...string) error {
	if err := d.runVerb(ctx, d.out, verb, append(args, "--kubeconfig", d.f.HubKubeconfigPath())...); err != nil {
		return fmt.Errorf("holdfast %s %v: %w", verb, args, err)
	}
	return nil
}

package demo

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller/clusterservicestatus"
	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/naming"
)

// rollOutChange edits the web template and waits until both clusters hold the new ConfigMap
// key and their status objects report the new revision.
func (d *serviceDemo) rollOutChange(ctx context.Context) error {
	statuses, _, err := d.readStatuses(ctx)
	if err != nil {
		return err
	}
	before := map[string]string{}
	for _, css := range statuses {
		if css.Spec.MultiClusterService == appsSet {
			before[css.Spec.Cluster] = clusterservicestatus.ServiceRevision(css, "web")
		}
	}
	key := client.ObjectKey{Namespace: demoTemplateNamespace, Name: webTemplate}
	tpl := &holdfastv1.ServiceTemplate{}
	if err := d.hub.Get(ctx, key, tpl); err != nil {
		return fmt.Errorf("reading ServiceTemplate %s: %w", key, err)
	}
	tpl.Spec.Inline = webManifestsChanged()
	start := time.Now()
	if err := d.hub.Update(ctx, tpl); err != nil {
		return fmt.Errorf("updating ServiceTemplate %s: %w", key, err)
	}
	seen := map[string]time.Duration{}
	err = d.poll(ctx, func(ctx context.Context) (bool, string, error) {
		statuses, _, err := d.readStatuses(ctx)
		if err != nil {
			return false, "", err
		}
		done := true
		var progress []string
		for i := range d.clusters {
			name := d.clusters[i].Name
			if _, ok := seen[name]; !ok {
				cm := &corev1.ConfigMap{}
				err := d.targets[name].Get(ctx, client.ObjectKey{Namespace: demoAppNamespace, Name: webSettingsName}, cm)
				if err == nil && cm.Data[webChangeKey] == webChangeValue {
					seen[name] = time.Since(start)
				}
			}
			state := "waiting"
			if t, ok := seen[name]; ok {
				state = fmt.Sprintf("ConfigMap updated, seen after %s", t.Round(time.Millisecond))
			} else {
				done = false
			}
			css := statuses[naming.StatusName(appsSet, name)]
			if css == nil || clusterservicestatus.ServiceRevision(css, "web") == before[name] || !conditions.IsTrue(css, holdfastv1.ReadyCondition) {
				done = false
			} else {
				state += ", status Ready at the new revision"
			}
			progress = append(progress, name+": "+state)
		}
		return done, strings.Join(progress, "; "), nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(d.out)
	tw := tabwriter.NewWriter(d.out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CLUSTER\tCONFIGMAP %s/%s\tWEB REVISION\n", demoAppNamespace, webSettingsName)
	statuses, _, err = d.readStatuses(ctx)
	if err != nil {
		return err
	}
	for i := range d.clusters {
		name := d.clusters[i].Name
		cm := &corev1.ConfigMap{}
		if err := d.targets[name].Get(ctx, client.ObjectKey{Namespace: demoAppNamespace, Name: webSettingsName}, cm); err != nil {
			return fmt.Errorf("reading ConfigMap %s/%s on %s: %w", demoAppNamespace, webSettingsName, name, err)
		}
		after := ""
		if css := statuses[naming.StatusName(appsSet, name)]; css != nil {
			after = clusterservicestatus.ServiceRevision(css, "web")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s -> %s\n", name, dataString(cm.Data), fleetview.ShortDigest(before[name]), fleetview.ShortDigest(after))
	}
	return tw.Flush()
}

// promoteCanary moves the canary service set to the other environment: the clusters it starts
// selecting get it, the ones it stops selecting have it withdrawn.
func (d *serviceDemo) promoteCanary(ctx context.Context) error {
	m := &holdfastv1.MultiClusterService{}
	if err := d.hub.Get(ctx, client.ObjectKey{Name: canarySet}, m); err != nil {
		return fmt.Errorf("reading MultiClusterService %s: %w", canarySet, err)
	}
	from, to := m.Spec.ClusterSelector, envSelector(canaryPromotionEnv)
	m.Spec.ClusterSelector = to
	start := time.Now()
	if err := d.hub.Update(ctx, m); err != nil {
		return fmt.Errorf("updating MultiClusterService %s: %w", canarySet, err)
	}
	var ready, gone, gainedBy, withdrawnFrom []string
	for i := range d.clusters {
		c := &d.clusters[i]
		if selects(to, c) {
			ready = append(ready, naming.StatusName(canarySet, c.Name))
		}
		if selects(from, c) && !selects(to, c) {
			gone = append(gone, naming.StatusName(canarySet, c.Name))
			withdrawnFrom = append(withdrawnFrom, c.Name)
		}
		if selects(to, c) && !selects(from, c) {
			gainedBy = append(gainedBy, c.Name)
		}
	}
	if err := d.waitStatuses(ctx, ready, gone); err != nil {
		return err
	}
	// The status objects are deleted once the withdrawal is done; check the targets agree.
	canaryCM := client.ObjectKey{Namespace: "default", Name: "canary-hello"}
	for i := range d.clusters {
		c := &d.clusters[i]
		err := d.targets[c.Name].Get(ctx, canaryCM, &corev1.ConfigMap{})
		switch {
		case err == nil && selects(to, c):
			fmt.Fprintf(d.out, "%s: ConfigMap %s present (canary deployed)\n", c.Name, canaryCM)
		case apierrors.IsNotFound(err) && !selects(to, c):
			fmt.Fprintf(d.out, "%s: ConfigMap %s gone (canary withdrawn)\n", c.Name, canaryCM)
		case err != nil && !apierrors.IsNotFound(err):
			return fmt.Errorf("reading ConfigMap %s on %s: %w", canaryCM, c.Name, err)
		default:
			return fmt.Errorf("ConfigMap %s on %s: present=%t, but the canary selects the cluster: %t", canaryCM, c.Name, err == nil, selects(to, c))
		}
	}
	fmt.Fprintf(d.out, "The canary moved %s after the selector change: deployed to %s, withdrawn from %s\n",
		since(start), fleetview.OrDash(strings.Join(gainedBy, ",")), fleetview.OrDash(strings.Join(withdrawnFrom, ",")))
	return nil
}

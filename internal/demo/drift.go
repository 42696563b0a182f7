package demo

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/naming"
)

const (
	// The field managers the drift section writes as: people at work with kubectl.
	editManager  = "kubectl-edit"
	scaleManager = "kubectl-scale"
	labelManager = "kubectl-label"

	// driftPoll is how often the drift section reads the target while it waits for a correction.
	driftPoll = 25 * time.Millisecond
	// driftTimeout bounds the wait for one correction; Holdfast corrects within a second.
	driftTimeout = 10 * time.Second
	// notDriftWindow is how long an object changed in fields Holdfast does not own must stay
	// untouched.
	notDriftWindow = 2 * time.Second

	driftCorrectedReason = "DriftCorrected"
	helloConfigMapName   = "greeter-hello"
	webDeploymentName    = "web"
)

// drift changes, by hand and as other field managers, objects Holdfast manages on the first
// target (sandbox-apps is in ContinuousWithDriftDetection mode), and shows each one put back at
// once; then a change Holdfast does not own, left alone; then the DriftCorrected Events.
func (d *serviceDemo) drift(ctx context.Context, timed func(string, time.Time)) error {
	cluster := d.clusters[0].Name
	statusName := naming.StatusName(appsSet, cluster)
	css := &holdfastv1.ClusterServiceStatus{}
	if err := d.hub.Get(ctx, client.ObjectKey{Namespace: d.f.Namespace, Name: statusName}, css); err != nil {
		return fmt.Errorf("reading ClusterServiceStatus %s: %w", statusName, err)
	}
	fmt.Fprintf(d.out, "MultiClusterService %s: syncMode %s (%s says %s).\n",
		appsSet, holdfastv1.SyncModeContinuousWithDriftDetection, statusName, fleetview.OrDash(string(css.Status.SyncMode)))
	fmt.Fprintf(d.out, "Holdfast watches what it manages on %s (label %s=%s) and puts back what others change.\n",
		cluster, holdfastv1.ManagedByLabel, holdfastv1.ManagedByValue)
	fmt.Fprintf(d.out, "Each change is made with %s's own kubeconfig; times run from the write until a read (every %s)\n", cluster, driftPoll)
	fmt.Fprintf(d.out, "finds the declared value.\n\n")

	web := client.ObjectKey{Namespace: demoAppNamespace, Name: webSettingsName}
	if err := d.editValue(ctx, cluster, web, timed); err != nil {
		return err
	}
	if err := d.deleteObject(ctx, cluster, client.ObjectKey{Namespace: demoAppNamespace, Name: helloConfigMapName}, timed); err != nil {
		return err
	}
	if err := d.scaleReplicas(ctx, cluster, client.ObjectKey{Namespace: demoAppNamespace, Name: webDeploymentName}, timed); err != nil {
		return err
	}
	// 4. A field Holdfast does not own, added: not drift.
	if err := d.addLabelNotDrift(ctx, cluster, web); err != nil {
		return err
	}
	return d.printDriftEvents(ctx, statusName)
}

// editValue: 1. a value Holdfast set, edited, put back.
func (d *serviceDemo) editValue(ctx context.Context, cluster string, web client.ObjectKey, timed func(string, time.Time)) error {
	c := d.targets[cluster]
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, web, cm); err != nil {
		return fmt.Errorf("reading ConfigMap %s on %s: %w", web, cluster, err)
	}
	declared, edited := cm.Data["logLevel"], "trace"
	if declared == edited {
		edited = "error"
	}
	cm.Data["logLevel"] = edited
	start := time.Now()
	if err := c.Update(ctx, cm, client.FieldOwner(editManager)); err != nil {
		return fmt.Errorf("editing ConfigMap %s on %s: %w", web, cluster, err)
	}
	fmt.Fprintf(d.out, "ConfigMap %s: data.logLevel %q -> %q by %s (Update)\n", web, declared, edited, editManager)
	restored := &corev1.ConfigMap{}
	took, err := d.waitCorrected(ctx, c, web, restored, start, func() bool { return restored.Data["logLevel"] == declared })
	if err != nil {
		return fmt.Errorf("ConfigMap %s on %s, data.logLevel edited by %s: %w (data now: %s)", web, cluster, editManager, err, dataString(restored.Data))
	}
	timed("Drift: edited ConfigMap value restored", time.Now().Add(-took))
	fmt.Fprintf(d.out, "  restored to %q after %s; managers now: %s\n", declared, fleetview.RoundDuration(took), managersString(restored))

	return nil
}

// deleteObject: 2. a managed object, deleted, recreated.
func (d *serviceDemo) deleteObject(ctx context.Context, cluster string, hello client.ObjectKey, timed func(string, time.Time)) error {
	c := d.targets[cluster]
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, hello, cm); err != nil {
		return fmt.Errorf("reading ConfigMap %s on %s: %w", hello, cluster, err)
	}
	oldUID, message := cm.UID, cm.Data["message"]
	start := time.Now()
	if err := c.Delete(ctx, cm); err != nil {
		return fmt.Errorf("deleting ConfigMap %s on %s: %w", hello, cluster, err)
	}
	fmt.Fprintf(d.out, "ConfigMap %s (service greeter, Helm chart hello): deleted (the API server records no manager for a deletion)\n", hello)
	restored := &corev1.ConfigMap{}
	took, err := d.waitCorrected(ctx, c, hello, restored, start, func() bool { return restored.UID != oldUID && restored.Data["message"] == message })
	if err != nil {
		return fmt.Errorf("ConfigMap %s on %s, deleted: %w", hello, cluster, err)
	}
	timed("Drift: deleted ConfigMap recreated", time.Now().Add(-took))
	fmt.Fprintf(d.out, "  recreated after %s (new UID %s, message %q)\n", fleetview.RoundDuration(took), shortUID(restored.UID), message)

	return nil
}

// scaleReplicas: 3. the replicas, scaled through the scale subresource as kubectl scale does,
// put back.
func (d *serviceDemo) scaleReplicas(ctx context.Context, cluster string, dep client.ObjectKey, timed func(string, time.Time)) error {
	c := d.targets[cluster]
	deployment := &appsv1.Deployment{}
	if err := c.Get(ctx, dep, deployment); err != nil {
		return fmt.Errorf("reading Deployment %s on %s: %w", dep, cluster, err)
	}
	replicas := ptrOr(deployment.Spec.Replicas, 1)
	scaled := replicas + 2
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: dep.Name, Namespace: dep.Namespace}, Spec: autoscalingv1.ScaleSpec{Replicas: scaled}}
	start := time.Now()
	if err := c.SubResource("scale").Update(ctx, deployment, client.WithSubResourceBody(scale), client.FieldOwner(scaleManager)); err != nil {
		return fmt.Errorf("scaling Deployment %s on %s: %w", dep, cluster, err)
	}
	fmt.Fprintf(d.out, "Deployment %s: spec.replicas %d -> %d by %s (Update of subresource scale)\n", dep, replicas, scaled, scaleManager)
	restoredDep := &appsv1.Deployment{}
	took, err := d.waitCorrected(ctx, c, dep, restoredDep, start, func() bool { return ptrOr(restoredDep.Spec.Replicas, 1) == replicas })
	if err != nil {
		return fmt.Errorf("restoring Deployment %s on %s, scaled by %s: %w (replicas now %d)", dep, cluster, scaleManager, err, ptrOr(restoredDep.Spec.Replicas, 1))
	}
	timed("Drift: scaled Deployment replicas restored", time.Now().Add(-took))
	fmt.Fprintf(d.out, "  restored to %d after %s; managers now: %s\n", replicas, fleetview.RoundDuration(took), managersString(restoredDep))

	return nil
}

// waitCorrected reads key into obj every driftPoll until corrected reports true, and returns
// how long that took from changed, the time of the change. A missing object is not corrected yet.
func (d *serviceDemo) waitCorrected(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object, changed time.Time, corrected func() bool) (time.Duration, error) {
	var took time.Duration
	err := wait.PollUntilContextTimeout(ctx, driftPoll, driftTimeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, obj); err != nil {
			return false, nil //nolint:nilerr // not there yet, or the target is busy: keep polling until the timeout
		}
		if corrected() {
			took = time.Since(changed)
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return 0, fmt.Errorf("not corrected within %s", driftTimeout)
	}
	return took, nil
}

// addLabelNotDrift adds a label to a managed object as another field manager and checks that
// Holdfast keeps its hands off: the label stays and the object is not written again.
func (d *serviceDemo) addLabelNotDrift(ctx context.Context, cluster string, key client.ObjectKey) error {
	c := d.targets[cluster]
	const label, value = "team", "payments"
	cm := &corev1.ConfigMap{}
	err := wait.PollUntilContextTimeout(ctx, driftPoll, driftTimeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, cm); err != nil {
			return false, nil //nolint:nilerr // keep polling until the timeout
		}
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		cm.Labels[label] = value
		if err := c.Update(ctx, cm, client.FieldOwner(labelManager)); err != nil {
			if apierrors.IsConflict(err) {
				return false, nil // written in between: read it again
			}
			return false, err
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("labelling ConfigMap %s on %s: %w", key, cluster, err)
	}
	rv := cm.ResourceVersion
	fmt.Fprintf(d.out, "ConfigMap %s: label %s=%s added by %s (Update); Holdfast does not own that field\n", key, label, value, labelManager)
	start := time.Now()
	for time.Since(start) < notDriftWindow {
		now := &corev1.ConfigMap{}
		if err := c.Get(ctx, key, now); err != nil {
			return fmt.Errorf("reading ConfigMap %s on %s: %w", key, cluster, err)
		}
		if now.ResourceVersion != rv || now.Labels[label] != value {
			return fmt.Errorf("ConfigMap %s on %s was written %s after a label was added by %s (resourceVersion %s -> %s, label %s=%q, managers %s): a change Holdfast does not own was treated as drift",
				key, cluster, since(start), labelManager, rv, now.ResourceVersion, label, now.Labels[label], managersString(now))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	fmt.Fprintf(d.out, "  not drift: the label is kept and resourceVersion %s is unchanged %s later (nothing rewritten)\n", rv, notDriftWindow)
	return nil
}

// printDriftEvents prints the DriftCorrected Events about ClusterServiceStatuses on the hub.
// Events are recorded asynchronously, so it waits a little for the one about statusName.
func (d *serviceDemo) printDriftEvents(ctx context.Context, statusName string) error {
	var found []eventsv1.Event
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Second, true, func(ctx context.Context) (bool, error) {
		list := &eventsv1.EventList{}
		if err := d.hub.List(ctx, list, client.InNamespace(d.f.Namespace)); err != nil {
			return false, nil //nolint:nilerr // keep polling until the timeout
		}
		found = found[:0]
		for _, e := range list.Items {
			if e.Reason == driftCorrectedReason && e.Regarding.Kind == "ClusterServiceStatus" {
				found = append(found, e)
			}
		}
		// The three corrections above may be reported in one Event or in up to three.
		return countCorrections(found, statusName) >= 3, nil
	})
	fmt.Fprintf(d.out, "\nEvents (events.k8s.io/v1) with reason %s on the hub, namespace %s:\n", driftCorrectedReason, d.f.Namespace)
	if len(found) == 0 {
		fmt.Fprintln(d.out, "  none recorded")
		return nil
	}
	sort.Slice(found, func(i, j int) bool { return eventTime(&found[i]).Before(eventTime(&found[j])) })
	tw := tabwriter.NewWriter(d.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  TIME\tREGARDING\tCOUNT\tNOTE")
	for i := range found {
		e := &found[i]
		count := int32(1)
		if e.Series != nil {
			count = e.Series.Count
		}
		fmt.Fprintf(tw, "  %s\t%s/%s\t%d\t%s\n", eventTime(e).Format("15:04:05.000"), e.Regarding.Kind, e.Regarding.Name, count, e.Note)
	}
	return tw.Flush()
}

// countCorrections counts the objects named as corrected in the Events about one status object.
func countCorrections(events []eventsv1.Event, statusName string) int {
	n := 0
	for i := range events {
		if events[i].Regarding.Name == statusName {
			n += strings.Count(events[i].Note, "(recreated)") + strings.Count(events[i].Note, "(restored)")
		}
	}
	return n
}

func eventTime(e *eventsv1.Event) time.Time {
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	if e.DeprecatedLastTimestamp.Time.IsZero() {
		return e.CreationTimestamp.Time
	}
	return e.DeprecatedLastTimestamp.Time
}

// managersString lists an object's field managers as "holdfast (Apply), kcm (Update/status)".
func managersString(o metav1.Object) string {
	var parts []string
	for _, m := range o.GetManagedFields() {
		s := fmt.Sprintf("%s (%s", m.Manager, m.Operation)
		if m.Subresource != "" {
			s += "/" + m.Subresource
		}
		parts = append(parts, s+")")
	}
	return fleetview.OrDash(strings.Join(parts, ", "))
}

func shortUID(uid types.UID) string {
	s := string(uid)
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

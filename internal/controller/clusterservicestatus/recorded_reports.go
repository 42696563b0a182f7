package clusterservicestatus

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/notify"
)

// A Pull cluster's drift is handled by its agent, which writes the records on the hub; the
// notification targets and their Secrets stay on the hub, and the agent has no metrics endpoint.
// So the hub reports what the agents record: each time a Pull cluster's status object changes,
// it reads the records newer than the last it reported (NotifiedAnnotation; the status object's
// creation before the first) and counts them in the metrics and notifies the service set's
// targets of them, as the reconcile of a Push cluster does of what it did (report); and the
// objects its inventory shows newly Contested or Uncorrectable (recorded_states.go). A record is
// reported at least once: the annotations are written after the sends are queued.

// NotifiedAnnotation, on a Pull cluster's status object, is the time of the newest drift record
// (detected or corrected) the hub has reported (RFC 3339, microseconds).
const NotifiedAnnotation = "holdfast.dev/notified-through"

// setupRecordedReports registers the hub's controller of the records Pull clusters' agents write.
func (r *Reconciler) setupRecordedReports(mgr ctrl.Manager, opts controller.Options) error {
	changed := predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return pullStatus(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return pullStatus(e.ObjectNew) && mayReport(e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	preds := []predicate.Predicate{changed}
	if r.Shard != nil {
		preds = append(preds, r.Shard.Predicate(clusterOfStatus))
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("pullrecords").
		For(&holdfastv1.ClusterServiceStatus{}, builder.WithPredicates(preds...)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, SkipNameValidation: opts.SkipNameValidation}).
		Complete(reconcile.Func(r.reportRecorded))
}

// pullStatus reports whether obj is a Pull cluster's status object: one the hub published a work
// for.
func pullStatus(obj client.Object) bool {
	_, ok := obj.GetAnnotations()[WorkAnnotation]
	return ok
}

// mayReport reports whether a Pull cluster's status object changed from old to new in a way
// that may bring something to report, as the hub's cache shows it (without the drift history
// and the inventory, CacheTransform): a drift seen (DriftCount), an object drifted or back in
// sync, failed or recovered (DriftedCount, FailedCount), or the Drifted or Contested condition
// changed (an object Contested or Uncorrectable, or no longer). Anything else, a template
// change applied or the hub's own annotations, is not worth the read of the whole object that
// reportRecorded starts with: a fleet-wide change is a thousand of them.
func mayReport(oldObj, newObj client.Object) bool {
	o, ok1 := oldObj.(*holdfastv1.ClusterServiceStatus)
	n, ok2 := newObj.(*holdfastv1.ClusterServiceStatus)
	if !ok1 || !ok2 {
		return oldObj.GetResourceVersion() != newObj.GetResourceVersion()
	}
	if o.Status.DriftCount != n.Status.DriftCount || o.Status.DriftedCount != n.Status.DriftedCount || o.Status.FailedCount != n.Status.FailedCount {
		return true
	}
	for _, t := range []string{holdfastv1.DriftedCondition, holdfastv1.ContestedCondition} {
		a, b := conditions.Get(o, t), conditions.Get(n, t)
		if (a == nil) != (b == nil) || (a != nil && (a.Status != b.Status || a.Reason != b.Reason || a.Message != b.Message)) {
			return true
		}
	}
	return false
}

// reportRecorded reports the records of a Pull cluster's status object newer than the last it
// reported.
func (r *Reconciler) reportRecorded(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// The cache holds no drift history (CacheTransform).
	css := &holdfastv1.ClusterServiceStatus{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, css); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !pullStatus(css) {
		return ctrl.Result{}, nil
	}
	since := css.CreationTimestamp.Time
	if at, err := time.Parse(time.RFC3339Nano, css.Annotations[NotifiedAnnotation]); err == nil {
		since = at
	}
	events, through := recordedEvents(css, since)
	resources, err := r.inventoryOfStatus(ctx, css)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading the inventory of ClusterServiceStatus %s: %w", req.NamespacedName, err)
	}
	reported := css.Annotations[NotifiedStatesAnnotation]
	states, nowReported := stateEvents(css, resources, reported, r.Clock.Now())
	if len(events) == 0 && len(states) == 0 && nowReported == reported {
		return ctrl.Result{}, nil
	}
	annotations := map[string]any{}
	if len(events) > 0 {
		annotations[NotifiedAnnotation] = through.UTC().Format(time.RFC3339Nano)
	}
	if nowReported != reported {
		annotations[NotifiedStatesAnnotation] = nowReported
		if nowReported == "" {
			annotations[NotifiedStatesAnnotation] = nil
		}
	}
	events = append(events, states...)
	mcs := &holdfastv1.MultiClusterService{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: css.Spec.MultiClusterService}, mcs); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("reading MultiClusterService %s: %w", css.Spec.MultiClusterService, err)
		}
		mcs = nil
	}
	r.send(ctx, css, mcs, events)
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Client.Patch(ctx, css, client.RawPatch(types.MergePatchType, data)); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("noting the drift records reported of ClusterServiceStatus %s: %w", req.NamespacedName, err)
	}
	return ctrl.Result{}, nil
}

// recordedEvents are the events of the drift records of css detected or corrected after since
// (DriftDetected, or DriftCorrected once corrected), and the time of the newest of them.
func recordedEvents(css *holdfastv1.ClusterServiceStatus, since time.Time) ([]driftEvent, time.Time) {
	cluster := types.NamespacedName{Namespace: css.Namespace, Name: css.Spec.Cluster}
	base := notify.Event{MultiClusterService: css.Spec.MultiClusterService, Cluster: cluster}
	var out []driftEvent
	through := since
	for i := range css.Status.Drifts {
		d := &css.Status.Drifts[i]
		fresh := d.DetectedTime.After(since)
		corrected := d.CorrectedTime != nil && d.CorrectedTime.After(since)
		if !fresh && !corrected {
			continue
		}
		e := base
		e.Service, e.Object, e.Drift = d.Service, d.ResourceRef, &d.DriftDetail
		e.Type, e.Time = notify.DriftDetected, d.DetectedTime.Time
		through = latest(through, d.DetectedTime)
		if d.CorrectedTime != nil {
			t := d.CorrectedTime.Time
			e.Type, e.Time, e.CorrectedTime = notify.DriftCorrected, t, &t
			if d.OnRequest {
				e.Type, e.Message = notify.Resumed, resumedMessage
			}
			through = latest(through, *d.CorrectedTime)
		}
		out = append(out, driftEvent{Event: e, fresh: fresh})
	}
	return out, through
}

// latest is the later of t and m.
func latest(t time.Time, m metav1.MicroTime) time.Time {
	if m.After(t) {
		return m.Time
	}
	return t
}

package clusterservicestatus

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/notify"
)

// driftEvents returns what drift handling did in this reconcile, as notification events:
// drift left waiting (DriftDetected), drift put back (DriftCorrected, for drift seen now or
// reported before, and Contested objects corrected after their backoff), objects that became
// Contested, Contested objects corrected again after a manual request (Resumed), and corrections
// the API server refused (CorrectionFailed).
func driftEvents(s *scope) []driftEvent {
	cluster := types.NamespacedName{Namespace: s.css.Namespace, Name: s.css.Spec.Cluster}
	base := notify.Event{Time: s.end, MultiClusterService: s.css.Spec.MultiClusterService, Cluster: cluster}
	var out []driftEvent
	correctedNow := map[int]bool{}
	for _, i := range s.correctedDrifts {
		correctedNow[i] = true
	}
	for i := range s.css.Status.Drifts {
		d := s.css.Status.Drifts[i]
		fresh, corrected := i < s.freshDrifts, correctedNow[i]
		if !fresh && !corrected {
			continue
		}
		e := base
		e.Service, e.Object, e.Drift = d.Service, d.ResourceRef, &d.DriftDetail
		e.Type = notify.DriftDetected
		if corrected {
			e.Type = notify.DriftCorrected
			t := d.CorrectedTime.Time
			e.CorrectedTime = &t
			if d.OnRequest {
				e.Type, e.Message = notify.Resumed, resumedMessage
			}
		}
		out = append(out, driftEvent{Event: e, fresh: fresh})
	}
	for _, rs := range newlyIn(s, holdfastv1.ResourceUncorrectable) {
		e := base
		e.Type, e.Service, e.Object, e.Drift, e.Message = notify.CorrectionFailed, rs.Service, rs.ResourceRef, rs.LastDrift, rs.Message
		out = append(out, driftEvent{Event: e})
	}
	for _, c := range s.decisions.contested {
		e := base
		e.Type, e.Service, e.Object = notify.Contested, c.Service, c.ResourceRef
		d := c.DriftDetail
		e.Drift = &d
		e.Message = c.message
		out = append(out, driftEvent{Event: e})
	}
	return out
}

// resumedMessage says what a Resumed event is.
const resumedMessage = "corrected again after a manual request"

// driftEvent is a notification event and whether its drift was first recorded now.
type driftEvent struct {
	notify.Event
	fresh bool
}

// report records drift metrics and sends notifications for what this reconcile did, after its
// status was written. It never blocks: sends are queued.
func (r *Reconciler) report(ctx context.Context, s *scope) {
	cluster := types.NamespacedName{Namespace: s.css.Namespace, Name: s.css.Spec.Cluster}.String()
	if s.gone {
		metrics.DeleteManagedObjects(cluster, s.css.Spec.MultiClusterService)
		return
	}
	st := &s.css.Status
	contested := 0
	for _, rs := range st.Resources {
		if rs.State == holdfastv1.ResourceContested {
			contested++
		}
	}
	metrics.SetManagedObjects(cluster, s.css.Spec.MultiClusterService, int(st.ResourceCount))
	metrics.SetContested(cluster, s.css.Spec.MultiClusterService, contested)
	r.send(ctx, s.css, s.mcs, driftEvents(s))
	r.Alerts.Route(ctx, s.mcs, clusterEvents(s))
}

// clusterEvents returns what became of the status object's cluster in this reconcile, for alert
// rules: ClusterUnreachable when its Ready condition became ClusterNotReady, Unhealthy when its
// Healthy condition became Unhealthy. A state that lasts is sent once, when it begins.
func clusterEvents(s *scope) []notify.Event {
	base := notify.Event{Time: s.end, MultiClusterService: s.css.Spec.MultiClusterService,
		Cluster: types.NamespacedName{Namespace: s.css.Namespace, Name: s.css.Spec.Cluster}}
	var out []notify.Event
	for _, st := range []struct {
		condition, reason string
		event             notify.EventType
	}{
		{holdfastv1.ReadyCondition, holdfastv1.ClusterNotReadyReason, notify.ClusterUnreachable},
		{holdfastv1.HealthyCondition, holdfastv1.UnhealthyReason, notify.Unhealthy},
	} {
		now := conditions.Get(s.css, st.condition)
		if now == nil || now.Status != metav1.ConditionFalse || now.Reason != st.reason {
			continue
		}
		if was := conditions.Get(s.before, st.condition); was != nil && was.Status == now.Status && was.Reason == now.Reason {
			continue
		}
		e := base
		e.Type, e.Message = st.event, now.Message
		out = append(out, e)
	}
	return out
}

// send counts drift events in the metrics and notifies the service set's targets of them: what
// a reconcile did (report), or what a Pull cluster's agent recorded (reportRecorded). It never
// blocks: sends are queued.
func (r *Reconciler) send(ctx context.Context, css *holdfastv1.ClusterServiceStatus, mcs *holdfastv1.MultiClusterService, events []driftEvent) {
	cluster := types.NamespacedName{Namespace: css.Namespace, Name: css.Spec.Cluster}.String()
	for _, e := range events {
		if e.fresh {
			metrics.DriftDetected(cluster, e.Service, e.Object.Kind, string(e.Drift.Type))
			metrics.DriftByUser(css.Spec.MultiClusterService, e.Drift.User)
		}
		if e.CorrectedTime != nil {
			metrics.DriftCorrected(cluster, e.Service, e.Object.Kind)
			metrics.ObserveCorrection(e.Object.Kind, e.CorrectedTime.Sub(e.Drift.DetectedTime.Time))
		}
	}
	if len(events) == 0 || mcs == nil {
		return
	}
	sent := make([]notify.Event, len(events))
	for i := range events {
		sent[i] = events[i].Event
	}
	r.Alerts.Route(ctx, mcs, sent)
	if r.Notifier == nil || len(mcs.Spec.Notifications) == 0 {
		return
	}
	for _, t := range r.notificationTargets(ctx, css, mcs) {
		for _, e := range events {
			if !r.Notifier.Send(t, e.Event) {
				ctrl.LoggerFrom(ctx).Info("Notification queue full; event dropped", "target", t.Name, "event", e.Type)
			}
		}
	}
}

// notificationTargets reads the service set's notification Secrets. A target that cannot be
// used is reported (Warning Event, log naming the Secret and key, never its values) and skipped.
func (r *Reconciler) notificationTargets(ctx context.Context, css *holdfastv1.ClusterServiceStatus, mcs *holdfastv1.MultiClusterService) []notify.Target {
	targets, invalid := notify.Targets(ctx, r.APIReader, mcs, func(target, namespace string) error {
		return r.Tenancy.Secret(mcs, target, namespace)
	})
	for _, it := range invalid {
		ctrl.LoggerFrom(ctx).Info("Notification target not usable; skipped", "target", it.Name, "error", it.Err.Error())
		if r.Recorder != nil {
			r.Recorder.Eventf(css, nil, corev1.EventTypeWarning, "NotificationTargetInvalid", "Notify", "%v", it.Err)
		}
	}
	return targets
}

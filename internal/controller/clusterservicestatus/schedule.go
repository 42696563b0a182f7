package clusterservicestatus

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
)

// requestedToken returns the value of holdfast.dev/reconcile-requested-at that asks for a
// reconcile not handled yet, from the MultiClusterService first and then the status object, or
// "" when neither does. Each place's value is handled once a reconcile that handled a request
// found it there (status.handledRequests, handledRequests): a request on the service set and
// one on the status object are then both handled, whichever lastHandledReconcileAt echoes. A
// status object written before handledRequests existed has only lastHandledReconcileAt.
func requestedToken(mcs *holdfastv1.MultiClusterService, css *holdfastv1.ClusterServiceStatus) string {
	handled := css.Status.HandledRequests
	if handled == nil {
		handled = &holdfastv1.HandledRequests{}
	}
	last := css.Status.LastHandledReconcileAt
	for _, c := range []struct{ value, handled string }{
		{mcs.Annotations[holdfastv1.ReconcileRequestedAtAnnotation], handled.ServiceSet},
		{css.Annotations[holdfastv1.ReconcileRequestedAtAnnotation], handled.Status},
	} {
		if c.value != "" && c.value != c.handled && c.value != last {
			return c.value
		}
	}
	return ""
}

// handledRequests are the values of holdfast.dev/reconcile-requested-at a reconcile that handles
// a request finds, on the service set and on the status object: it handles both.
func handledRequests(mcs *holdfastv1.MultiClusterService, css *holdfastv1.ClusterServiceStatus) *holdfastv1.HandledRequests {
	return &holdfastv1.HandledRequests{
		ServiceSet: mcs.Annotations[holdfastv1.ReconcileRequestedAtAnnotation],
		Status:     css.Annotations[holdfastv1.ReconcileRequestedAtAnnotation],
	}
}

// interval is the MultiClusterService's reconcile interval, defaulted.
func interval(mcs *holdfastv1.MultiClusterService) time.Duration {
	if d := mcs.Spec.ReconcileInterval; d != nil && d.Duration > 0 {
		return d.Duration
	}
	return holdfastv1.DefaultReconcileInterval
}

// nextFullReconcile returns when the next full reconcile is due: reconcileInterval after the
// last one persisted in status, or now when there was none.
func nextFullReconcile(mcs *holdfastv1.MultiClusterService, css *holdfastv1.ClusterServiceStatus, now time.Time) time.Time {
	last := css.Status.LastFullReconcileTime
	if last == nil {
		return now
	}
	return last.Add(interval(mcs))
}

// namespaceRetry is how often objects waiting for their namespace to exist are tried again.
const namespaceRetry = 5 * time.Second

// foreignRetry is how often a service whose objects exist on the cluster without Holdfast having
// created them (adoption Never) looks again: watches select only Holdfast's objects, so nothing
// tells when someone deletes such an object for Holdfast to create its own.
const foreignRetry = time.Minute

// waitsForForeign reports whether an object was left untouched because Holdfast did not create it.
func (s *scope) waitsForForeign() bool {
	for _, o := range s.services {
		if o.result == nil {
			continue
		}
		for _, r := range o.result.Objects {
			if r.Action == apply.Conflict && r.Foreign {
				return true
			}
		}
	}
	return false
}

// waitsForNamespace reports whether an object failed because its namespace does not exist.
func (s *scope) waitsForNamespace() bool {
	for _, o := range s.services {
		if o.result == nil {
			continue
		}
		for _, r := range o.result.Failed() {
			if apply.MissingNamespace(r.Err) != "" {
				return true
			}
		}
	}
	return false
}

// comeBackAfter shortens the wait until the next full reconcile to the opening of a correction
// window some drift waits for, the retry of a refused correction, the correction of a Contested
// object after its backoff, or the next look for a namespace objects wait for, for objects
// Holdfast did not create or for permissions the service set's ServiceAccount lacked, if sooner.
func (r *Reconciler) comeBackAfter(s *scope, nextFull time.Duration) time.Duration {
	after := nextFull
	if s.waitsForNamespace() && namespaceRetry < after {
		after = namespaceRetry
	}
	if s.waitsForForeign() && foreignRetry < after {
		after = foreignRetry
	}
	if s.waitsForPermission() && permissionRetry < after {
		after = permissionRetry
	}
	if !s.nextWindow.IsZero() && s.nextWindow.Sub(s.now) < after {
		after = s.nextWindow.Sub(s.now)
	}
	if wait := healthWait(s); wait > 0 && wait < after {
		after = wait
	}
	if retry := retryUncorrectable(s); retry > 0 && retry < after {
		after = retry
	}
	if next := r.fights.Next(client.ObjectKeyFromObject(s.css)); !next.IsZero() && next.Sub(s.now) < after {
		after = max(next.Sub(s.now), 50*time.Millisecond)
	}
	return after
}

// noteNextWindow remembers the earliest opening of windows after now.
func (s *scope) noteNextWindow(windows []holdfastv1.CorrectionWindow) {
	if next := drift.NextWindowStart(windows, s.now); !next.IsZero() && (s.nextWindow.IsZero() || next.Before(s.nextWindow)) {
		s.nextWindow = next
	}
}

package clusterservicestatus

import (
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// requestedToken returns the value of holdfast.dev/reconcile-requested-at that asks for a
// reconcile not handled yet, from the MultiClusterService first and then the status object, or
// "" when neither does.
func requestedToken(mcs *holdfastv1.MultiClusterService, css *holdfastv1.ClusterServiceStatus) string {
	handled := css.Status.LastHandledReconcileAt
	for _, v := range []string{
		mcs.Annotations[holdfastv1.ReconcileRequestedAtAnnotation],
		css.Annotations[holdfastv1.ReconcileRequestedAtAnnotation],
	} {
		if v != "" && v != handled {
			return v
		}
	}
	return ""
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

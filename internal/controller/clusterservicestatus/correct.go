package clusterservicestatus

import (
	"context"
	"errors"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/controller/interrupt"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/inventory"
)

// The correction phase, when plan says stepCorrect or stepCorrectThenFull: correctDrifts puts
// back the drifted objects watches saw, and only those, and the reconcile comes back to retry
// corrections the API server refused (retryUncorrectable). What is done about each object is
// decided in respond.go; what is recorded of it, in record_drifts.go.

// correctBeforeDeploy handles drifts watches saw on a status object that also needs a full
// reconcile, in two cases where nothing else asks for one: its periodic full reconcile is due, or
// its services' inputs changed since they were deployed (a new revision rolling out to every
// cluster; rendered then holds the drifted objects as deployed, see facts.mayCorrectAheadOfNewInputs). The
// drifted objects are put back first, as when nothing is due, and the full reconcile comes back
// right after, at the routine priority, so the correction waits for no render, comparison or
// apply of the whole set; an object the new revision changes too is written twice. Anything else
// that asks for a full reconcile is left to it.
func (r *Reconciler) correctBeforeDeploy(ctx context.Context, s *scope, rendered []renderedService) (ctrl.Result, error) {
	if _, err := r.correctDrifts(ctx, s, rendered); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: time.Millisecond}, nil
}

// correctDrifts handles the drifts watches saw when nothing else is due: it puts back (or
// reports, as the policy says) the drifted objects and only those, so that correcting one
// object costs the same whatever the size of its set. Their declarations come from memory
// (rendered holds only them, see rememberedDeclarations), each is read with a GET rather than by listing its
// kind, and the state of the objects decides through what this process recorded of the status
// object when it last wrote or read it whole, as long as the status object was not changed
// since. Only once the cluster is corrected is the status object read, to record it.
func (r *Reconciler) correctDrifts(ctx context.Context, s *scope, rendered []renderedService) (ctrl.Result, error) {
	s.deployed, s.corrections = true, true
	if rec := r.recordedForCorrection(s.css); rec != nil {
		s.previous = rec.unusual
		// The whole object is read later; no older than what was recorded.
		s.readFrom = rec.resourceVersion
	} else {
		if err := r.readWhole(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
		s.previous = inventory.IndexOf(s.css.Status.Resources)
	}

	applier, err := s.applier()
	if err != nil {
		return ctrl.Result{}, err
	}
	// Begun, the corrections are made and recorded even if the process is told to stop
	// meanwhile (finish): an apply may reach the cluster and its answer not come back, and the
	// drift it put back would go unrecorded, the next process finding the object in sync.
	actx, cancel := interrupt.Unstoppable(ctx, correctionLimit)
	defer cancel()
	results := map[string]*apply.Result{}
	var transient []error
	for _, rs := range rendered {
		res, err := r.applyService(actx, s, applier, rs, nil, true)
		if err != nil {
			transient = append(transient, fmt.Errorf("correcting service %q: %w", rs.svc.Name, err))
			continue
		}
		if res == nil {
			continue
		}
		if ferr := transientFailures(res); ferr != nil {
			transient = append(transient, fmt.Errorf("service %q: %w", rs.svc.Name, ferr))
		}
		results[rs.svc.Name] = res
	}

	// The cluster is as it should be; the status object is read to record it when it is
	// recorded, which need not hold up the next correction (recordings.go): with the part of
	// its inventory that holds what the corrections changed (inventory_part.go). It may be
	// settled again on a newer read (record).
	touched, services := touchedRefs(results), len(s.services)
	s.settle = func(ctx context.Context) error {
		if err := r.readPart(ctx, s, touched); err != nil {
			return err
		}
		s.previous = inventory.IndexOf(s.css.Status.Resources)
		s.resources = s.css.Status.Resources
		s.services = s.services[:services]
		for _, rs := range rendered {
			res, ok := results[rs.svc.Name]
			if !ok {
				out := outcomeOf(rs)
				out.unchanged = true
				out.applied, out.total = rs.count, rs.count
				s.services = append(s.services, out)
				continue
			}
			out, entries := r.serviceApplied(s, rs, res, resourcesOf(s.resources, rs.svc.Name), true)
			s.resources = inventory.Replace(s.resources, entries)
			s.services = append(s.services, out)
		}
		return nil
	}
	if len(transient) > 0 {
		return ctrl.Result{}, errors.Join(transient...)
	}
	return ctrl.Result{RequeueAfter: r.comeBackAfter(s, nextFullReconcile(s.mcs, s.css, s.now).Sub(s.now))}, nil
}

// correctionLimit bounds the corrections of a reconcile that has no timeout of its own once a
// shutdown no longer ends them (interrupt.Unstoppable).
const correctionLimit = 30 * time.Second

// recordedForCorrection is what this process recorded of a status object, for correctDrifts to
// decide with, if the cached version is one it recorded (memory.recordedAt) or a recording of
// it is in flight (recordings.go): then the cache may already hold the version that recording
// wrote, which memory learns only once the patch returns, and what memory holds is at most one
// correction behind. Else nil: someone else changed it, and it is read whole.
func (r *Reconciler) recordedForCorrection(css *holdfastv1.ClusterServiceStatus) *recorded {
	key := client.ObjectKeyFromObject(css)
	if rec := r.memory.recordedAt(key, css.ResourceVersion); rec != nil {
		return rec
	}
	if r.recordings.busy(key) {
		return r.memory.lastRecorded(key)
	}
	return nil
}

// retryUncorrectable returns when the reconcile should come back to retry refused corrections
// (drift.RetryAfter of the oldest), or 0 when there are none. Corrections a service's policy
// makes only on request (Report outside its windows) are not retried on their own.
func retryUncorrectable(s *scope) time.Duration {
	var after time.Duration
	for _, rs := range s.resources {
		if rs.State != holdfastv1.ResourceUncorrectable || rs.LastDrift == nil || !s.correctsNow(rs.Service) {
			continue
		}
		if d := drift.RetryAfter(rs.LastDrift.DetectedTime.Time, s.now); after == 0 || d < after {
			after = d
		}
	}
	return after
}

// correctsNow reports whether the drift policy of the named service corrects drift now on its
// own; false for a service the service set no longer declares.
func (s *scope) correctsNow(service string) bool {
	for _, svc := range s.mcs.Spec.Services {
		if svc.Name == service {
			return s.policy(svc).CorrectsNow(s.now)
		}
	}
	return false
}

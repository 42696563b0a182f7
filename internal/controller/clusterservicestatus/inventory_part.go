package clusterservicestatus

import (
	"context"
	"errors"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/inventory"
	"holdfast.dev/holdfast/internal/metrics"
)

// Recording a drift correction of a large service set reads and writes only the part of its
// inventory that holds the entries the correction changed (inventory.Part): the status object
// and the shards holding them, not the whole inventory, so that a correction in a set of 20,000
// objects costs about what it costs in a set of ten. The rest of the package works on the part
// as on the whole inventory; three things read it differently, all here or named here:
//
//   - the counts (countResources): the entries left out are InSync, s.uncounted of them;
//   - health (setHealthy, setServiceHealth): a part is read only when the status object says
//     every object is healthy, so the entries left out are; a service none of whose objects were
//     read keeps the health recorded;
//   - the write (writeStatus): inventory.SavePart, which refuses with inventory.ErrBeyondPart
//     when the entries changed beyond the part, and record then reads the whole inventory.

// partReadable reports whether a recording may read only part of css's inventory: it is in
// shards whose summary lists every entry not InSync, every object is healthy, and the process
// keeps no copy of status objects read whole (a Pull cluster's agent, r.Statuses).
func (r *Reconciler) partReadable(s *scope, css *holdfastv1.ClusterServiceStatus) bool {
	return !s.wholeOnly && r.Statuses == nil && inventory.Partial(css) && conditions.IsTrue(css, holdfastv1.HealthyCondition)
}

// readPart reads the status object of the scope as readWhole does, with only the part of its
// inventory holding the entries of refs when it can (partReadable), else whole.
func (r *Reconciler) readPart(ctx context.Context, s *scope, refs []holdfastv1.ResourceRef) error {
	if s.whole {
		return nil
	}
	css, err := r.readLatest(ctx, s)
	if err != nil {
		return err
	}
	if !r.partReadable(s, css) {
		return r.takeWhole(ctx, s, css)
	}
	entries, part, err := r.inventory().LoadPart(ctx, css, refs)
	var incomplete *inventory.IncompleteError
	switch {
	case errors.As(err, &incomplete):
		// The whole read says what is missing.
		return r.takeWhole(ctx, s, css)
	case err != nil:
		return err
	}
	uncounted := int(css.Status.ResourceCount) - len(entries)
	inSync := 0
	for _, rs := range entries {
		if rs.State == holdfastv1.ResourceInSync {
			inSync++
		}
	}
	if uncounted < 0 || int(css.Status.InSyncCount)-inSync != uncounted {
		// The counts do not add up: the entries left out would not all be InSync.
		ctrl.LoggerFrom(ctx).V(1).Info("Inventory counts do not match its summary; reading it whole",
			"resourceCount", css.Status.ResourceCount, "inSyncCount", css.Status.InSyncCount, "read", len(entries))
		return r.takeWhole(ctx, s, css)
	}
	metrics.InventoryRead(metrics.InventoryPart)
	s.summary, s.shards, s.inventoryProblem = css.Status.Resources, nil, nil
	s.part, s.uncounted = part, uncounted
	css.Status.Resources = entries
	s.css, s.before, s.whole = css, css.DeepCopy(), true
	r.memory.setRecorded(client.ObjectKeyFromObject(css), css.Spec.Cluster, css, "")
	return nil
}

// touchedRefs are the objects whose entries corrections with results change.
func touchedRefs(results map[string]*apply.Result) []holdfastv1.ResourceRef {
	var out []holdfastv1.ResourceRef
	for _, res := range results {
		for _, o := range res.Objects {
			out = append(out, fromRef(o.Ref))
		}
		for _, e := range res.Inventory {
			out = append(out, fromRef(e.Ref))
		}
	}
	return out
}

// recordedHealth is the health recorded of the named service, among recorded.
func recordedHealth(recorded []holdfastv1.ServiceStatus, name string) (holdfastv1.HealthStatus, string) {
	for _, st := range recorded {
		if st.Name == name {
			return st.Health, st.HealthMessage
		}
	}
	return "", ""
}

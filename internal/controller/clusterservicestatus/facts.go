package clusterservicestatus

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/metrics"
)

// gatherFacts gathers what plan decides from, and the declarations the drifts watches saw are
// judged against, rendering only when neither memory's declarations as the services' inputs are
// now nor, ahead of new inputs, as they were deployed will do. It leaves in s.drifts the drifts
// still to handle (keepDrifts) and takes no mark (takeMarks).
func (r *Reconciler) gatherFacts(ctx context.Context, s *scope) (facts, []renderedService) {
	key := client.ObjectKeyFromObject(s.css)
	f := facts{
		containers:    drift.DeletesContainer(s.drifts),
		due:           !s.now.Before(nextFullReconcile(s.mcs, s.css, s.now)),
		setChanged:    serviceSetChanged(s.css, s.mcs, s.deployedRevision()),
		unsettled:     !conditions.IsTrue(s.css, holdfastv1.AppliedCondition),
		recheck:       r.memory.hasRecheck(key),
		requested:     requestedToken(s.mcs, s.css) != "",
		healthPending: healthPending(s.css),
	}
	_, f.compared = r.memory.lastCompared(key)
	var declared []renderedService
	declared, f.declarations, s.drifts = r.declarationsFor(ctx, s, f)
	f.drifts, f.containers = len(s.drifts) > 0, drift.DeletesContainer(s.drifts)
	if f.declarations != asDeployed {
		// As deployed, the declarations are not what the service set declares now.
		f.changed = declarationChanged(s.css, s.mcs, s.deployedRevision(), declared)
		f.compare = r.comparisonDue(s)
	}
	return f, declared
}

// declarationsFor returns the declarations the drifts watches saw are judged against, where
// they come from, and the drifts still to handle against them (keepDrifts, once): memory's as
// the services' inputs are now; else, when the drifts may be corrected ahead of new inputs and
// some remain against them, memory's as deployed; else a rendering.
func (r *Reconciler) declarationsFor(ctx context.Context, s *scope, f facts) ([]renderedService, declarationSource, []holdfastv1.DriftRecord) {
	if declared, ok := r.rememberedDeclarations(ctx, s, false); ok {
		return declared, fromMemory, keepDrifts(s, declared)
	}
	if len(s.drifts) > 0 && f.mayCorrectAheadOfNewInputs() {
		if deployed, ok := r.rememberedDeclarations(ctx, s, true); ok {
			if kept := keepDrifts(s, deployed); len(kept) > 0 {
				return deployed, asDeployed, kept
			}
		}
	}
	declared := r.services(ctx, s)
	return declared, fromRendering, keepDrifts(s, declared)
}

// takeMarks takes the marks a full reconcile answers: a recheck asked for, and the corrections
// of Contested objects whose backoff ended (the full reconcile's comparison corrects them).
func (r *Reconciler) takeMarks(s *scope) {
	key := client.ObjectKeyFromObject(s.css)
	r.memory.takeRecheck(key)
	r.fights.TakeDue(key, s.now)
}

// comparisonDue reports whether, in drift-detection mode, the cluster must be compared with
// the declaration although nothing else is due: the first time in this process (drift made
// while the controller was down), after the cluster reconnected or its link recovered from a
// partition too short to disconnect it (drift made meanwhile, which a watch may not show: it
// may have hung on a dead connection), when the correction of a Contested object waited out its
// backoff, and when drift waiting for a correction window can now be corrected.
func (r *Reconciler) comparisonDue(s *scope) bool {
	if s.mcs.Spec.SyncMode != holdfastv1.SyncModeContinuousWithDriftDetection {
		return false
	}
	last, ok := r.memory.lastCompared(client.ObjectKeyFromObject(s.css))
	if !ok {
		return true
	}
	if c := conditions.Get(s.cluster, holdfastv1.ClusterConnectedCondition); c != nil &&
		!c.LastTransitionTime.Time.Before(last.Truncate(time.Second)) {
		return true
	}
	if s.conn != nil && s.conn.Recovered().After(last) {
		return true
	}
	if r.fights.Due(client.ObjectKeyFromObject(s.css), s.now) {
		return true
	}
	if s.css.Status.DriftedCount > 0 {
		for _, svc := range s.mcs.Spec.Services {
			if pol := s.policy(svc); pol.Action == holdfastv1.DriftActionReport && drift.InWindow(pol.Windows, s.now) {
				return true
			}
		}
	}
	return false
}

// declarationChanged reports whether what is declared for the cluster differs from what was
// last reconciled: a new generation, a service added or removed, or a different rendering.
// serviceSetChanged reports whether the service set changed (its generation or sync mode), or
// the rollout gave the status object another revision, since it was last reconciled completely.
func serviceSetChanged(css *holdfastv1.ClusterServiceStatus, mcs *holdfastv1.MultiClusterService, revision string) bool {
	return css.Status.ObservedServiceSetGeneration != mcs.Generation || css.Status.SyncMode != mcs.Spec.SyncMode ||
		css.Status.Revision != revision
}

func declarationChanged(css *holdfastv1.ClusterServiceStatus, mcs *holdfastv1.MultiClusterService, revision string, rendered []renderedService) bool {
	if serviceSetChanged(css, mcs, revision) {
		return true
	}
	if len(rendered) != len(css.Status.Services) {
		return true
	}
	for i, rs := range rendered {
		prev := css.Status.Services[i]
		if prev.Name != rs.svc.Name || rs.err != nil || prev.Revision != rs.digest {
			return true
		}
	}
	return false
}

// keepDrifts returns the drifts watches reported that remain to be handled, judged against the
// declarations rendered (drift.KeepReported).
func keepDrifts(s *scope, rendered []renderedService) []holdfastv1.DriftRecord {
	if len(s.drifts) == 0 {
		return nil
	}
	declared := make([]drift.DeclaredService, 0, len(rendered))
	for _, rs := range rendered {
		declared = append(declared, drift.DeclaredService{Policy: s.policy(rs.svc), Namespace: rs.svc.Namespace,
			Objects: rs.objects, Failed: rs.err != nil})
	}
	kept, superseded := drift.KeepReported(s.drifts, s.mcs.Spec.SyncMode, declared, s.ownWrites, s.clusterKey(), s.css.Status.Drifts)
	ignoredSuperseded(superseded)
	return kept
}

// ignoredSuperseded counts n drift reports dropped as superseded (drift.Superseded).
func ignoredSuperseded(n int) {
	for range n {
		metrics.DriftEventIgnored(metrics.IgnoredSuperseded)
	}
}

// clusterKey is the key of the Cluster the status object is of.
func (s *scope) clusterKey() types.NamespacedName {
	return types.NamespacedName{Namespace: s.css.Namespace, Name: s.css.Spec.Cluster}
}

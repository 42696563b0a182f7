package clusterservicestatus

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
)

// gatherFacts gathers what plan decides from, and the declarations the drifts watches saw are
// judged against, rendering only when neither memory's declarations as the services' inputs are
// now nor, ahead of new inputs, as they were deployed will do. It leaves in s.drifts the drifts
// still to handle (keepDrifts) and takes no mark (takeMarks).
func (r *Reconciler) gatherFacts(ctx context.Context, s *scope) (facts, []renderedService) {
	key := client.ObjectKeyFromObject(s.css)
	f := facts{
		containers:    deletedContainers(s.drifts),
		due:           !s.now.Before(nextFullReconcile(s.mcs, s.css, s.now)),
		setChanged:    serviceSetChanged(s.css, s.mcs),
		unsettled:     !conditions.IsTrue(s.css, holdfastv1.AppliedCondition),
		recheck:       r.memory.hasRecheck(key),
		requested:     requestedToken(s.mcs, s.css) != "",
		healthPending: healthPending(s.css),
	}
	_, f.compared = r.memory.lastCompared(key)
	declared, remembered := r.rememberedDeclarations(ctx, s, false)
	switch {
	case remembered:
		f.declarations = fromMemory
	case len(s.drifts) > 0 && f.mayCorrectAheadOfNewInputs():
		if deployed, ok := r.rememberedDeclarations(ctx, s, true); ok && len(keepDrifts(s, deployed)) > 0 {
			declared, f.declarations = deployed, asDeployed
			break
		}
		fallthrough
	default:
		declared, f.declarations = r.renderAll(ctx, s), fromRendering
	}
	s.drifts = keepDrifts(s, declared)
	f.drifts, f.containers = len(s.drifts) > 0, deletedContainers(s.drifts)
	if f.declarations != asDeployed {
		// As deployed, the declarations are not what the service set declares now.
		f.changed = declarationChanged(s.css, s.mcs, declared)
		f.compare = r.comparisonDue(s)
	}
	return f, declared
}

// takeMarks takes the marks a full reconcile answers: a recheck asked for, and the corrections
// of Contested objects whose backoff ended (the full reconcile's comparison corrects them).
func (r *Reconciler) takeMarks(s *scope) {
	key := client.ObjectKeyFromObject(s.css)
	r.memory.takeRecheck(key)
	r.memory.fights.TakeDue(key, s.now)
}

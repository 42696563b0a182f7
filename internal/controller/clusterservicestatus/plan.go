package clusterservicestatus

// What one reconcile of a status object does is decided in one place, plan, from facts
// gathered before anything is written to the cluster (gatherFacts). The marks that ask for a
// comparison with the cluster (a recheck, a fight's correction whose backoff ended) are read
// without being taken while the facts are gathered, and taken only once the plan is a full
// reconcile, which is what they ask for (takeMarks): the order in which facts are gathered
// changes nothing.

// step is what a reconcile does.
type step int

const (
	// stepWait: nothing until the next full reconcile; a restart lands here too, so a recent
	// run is not repeated.
	stepWait step = iota
	// stepCorrect: the drifted objects watches saw are put back (or reported, as the policy
	// says), and only they (correctDrifts).
	stepCorrect
	// stepCorrectThenFull: the drifted objects are put back first, and a full reconcile comes
	// back right after (correctBeforeDeploy).
	stepCorrectThenFull
	// stepFull: every service is rendered, compared with the cluster and applied, and what is
	// no longer declared is pruned (deploy).
	stepFull
)

func (p step) String() string {
	switch p {
	case stepWait:
		return "wait"
	case stepCorrect:
		return "correct"
	case stepCorrectThenFull:
		return "correct, then full"
	default:
		return "full"
	}
}

// declarationSource is where the declarations a reconcile judged drifts against came from.
type declarationSource int

const (
	// fromRendering: every enabled service was rendered (renderAll).
	fromRendering declarationSource = iota
	// fromMemory: memory holds every enabled service as its inputs are now, and the drifted
	// objects (rememberedDeclarations).
	fromMemory
	// asDeployed: the services' inputs changed since they were deployed (a new revision
	// rolling out to the fleet, not rendered yet), and memory holds the drifted objects as the
	// status object records them applied (facts.mayCorrectAheadOfNewInputs).
	asDeployed
)

// facts are what plan decides from, gathered by gatherFacts.
type facts struct {
	// declarations is where the declarations below come from.
	declarations declarationSource
	// drifts: drifts watches saw remain to be handled once judged against the declarations
	// (keepDrifts); containers: one of them is the deletion of a Namespace or a CRD, which only
	// a full reconcile puts back (drift.DeletesContainer). Before the declarations are known (for
	// mayCorrectAheadOfNewInputs), containers is of the drifts as watches saw them.
	drifts, containers bool
	// due: the periodic full reconcile is due.
	due bool
	// setChanged: the service set changed since it was last reconciled completely
	// (serviceSetChanged); changed: so did what it declares for the cluster (declarationChanged).
	setChanged, changed bool
	// unsettled: the last apply did not succeed (Applied is not True).
	unsettled bool
	// recheck: a comparison with the cluster was asked for (memory.hasRecheck).
	recheck bool
	// compared: this process compared the status object's objects with the cluster before;
	// compare: it must do so again although nothing else is due (comparisonDue).
	compared, compare bool
	// requested: holdfast.dev/reconcile-requested-at asks for a reconcile not handled yet.
	requested bool
	// healthPending: not every object was healthy at the last visit: a full reconcile reads
	// them anew.
	healthPending bool
}

// wantsFull reports whether anything but the periodic full reconcile being due asks for one.
func (f facts) wantsFull() bool {
	return f.changed || f.unsettled || f.recheck || f.compare || f.requested || f.healthPending
}

// mayCorrectAheadOfNewInputs reports whether drifts watches saw while a status object's inputs
// changed (nothing rendered them yet) may be put back before the full reconcile, judged against
// the declarations as deployed: when nothing else asks for the full reconcile's judgement — a
// change of the service set itself (policy, mode), a manual request, a recheck, no comparison
// made yet by this process, a set with failed or refused applies, a deleted namespace. gatherFacts
// asks it before rendering, so changed, compare and healthPending are not known yet.
func (f facts) mayCorrectAheadOfNewInputs() bool {
	return !f.containers && !f.requested && !f.setChanged && !f.unsettled && !f.recheck && f.compared
}

// plan decides what a reconcile does.
func plan(f facts) step {
	switch {
	case f.declarations == asDeployed && f.drifts:
		return stepCorrectThenFull
	case f.declarations == fromMemory && f.drifts && !f.containers && !f.wantsFull():
		if f.due {
			return stepCorrectThenFull
		}
		return stepCorrect
	case !f.due && !f.wantsFull() && !f.drifts:
		return stepWait
	}
	return stepFull
}

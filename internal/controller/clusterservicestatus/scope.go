package clusterservicestatus

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/healthcheck"
	"holdfast.dev/holdfast/internal/inventory"
	"holdfast.dev/holdfast/internal/rendercache"
	"holdfast.dev/holdfast/internal/rollout"
	"holdfast.dev/holdfast/internal/work"
)

// problem is a reason and message for a condition that is not fine.
type problem struct {
	reason, message string
}

// serviceOutcome is what happened to one declared service in this reconcile.
type serviceOutcome struct {
	name string
	// renderErr is set when the service could not be rendered; its objects stay as they were.
	renderErr *problem
	// revision is the digest of the rendered objects.
	revision string
	objects  int
	// result of the apply, nil when not applied in this reconcile.
	result *apply.Result
	// applyErr is an error of the whole apply (cluster unreachable), not of one object.
	applyErr error
	// kept: OneTime mode and already deployed, so it was left alone.
	kept bool
	// unchanged: a drift correction changed none of its objects (see correctDrifts); its
	// status stays as recorded.
	unchanged bool
	// applied counts its objects applied as declared (now or, for those a correction left
	// alone, before), total all of them: the declared ones and those pruned or withdrawn.
	applied, total int
	// waiting: not applied because of its dependencies (spec.services[].dependsOn): they are
	// not ready yet (WaitingForDependencies), or cannot be (InvalidDependency, or
	// CrossNamespaceReference for another tenant's service set). Its objects stay as they were.
	waiting *problem
	// overrides name the service's overrides that select the cluster.
	overrides []string
}

// outcomeOf starts the outcome of a declared service.
func outcomeOf(rs renderedService) serviceOutcome {
	return serviceOutcome{name: rs.svc.Name, revision: rs.digest, objects: rs.count, overrides: rs.overrides}
}

// tally counts the service's objects applied as declared, and all of them (see applied).
func (o serviceOutcome) tally() (applied, total int) { return o.applied, o.total }

// scope is what one reconcile learned; the deferred status patch computes everything from it.
type scope struct {
	// css is the status object being reconciled, and before a copy as read: from the cache,
	// without the inventory and drift history, until readWhole read the whole object, or
	// readPart the part of it a recording needs (whole).
	css    *holdfastv1.ClusterServiceStatus
	before *holdfastv1.ClusterServiceStatus
	whole  bool
	// readFrom, when set, is the version readWhole reads at least instead of the cached one:
	// what this process recorded of the status object, which a drift correction decided from.
	readFrom string
	// fresh makes readWhole read the newest version (a quorum read): a status patch met it.
	fresh bool
	// published: the status object is a Pull cluster's, whose work this reconcile published
	// (publish.go); its agent writes the status.
	published bool
	// noWork: in a Pull cluster's agent, the hub has published no work for the status object
	// yet; nothing is applied or written. work is the one published, once read.
	noWork bool
	work   *work.Work
	mcs    *holdfastv1.MultiClusterService
	now    time.Time
	// end is when the reconcile's work was done, just before the status is computed.
	end time.Time

	cluster        *holdfastv1.Cluster
	conn           *fleet.Connection
	clusterProblem *problem
	// awaitingConnection: the Cluster is Connected, this process has not connected yet.
	awaitingConnection bool
	// unresponsiveUntil: the cluster let requests time out, and its requests fail at once
	// until then (fleet.Connection.Unresponsive).
	unresponsiveUntil time.Time

	deleting bool
	gone     bool

	// ownWrites notes the writes made through targetClient (Reconciler.ownWrites).
	ownWrites *drift.OwnWrites

	// ran is true when a full reconcile happened: every service rendered and, where due,
	// compared with the cluster and applied.
	ran bool
	// deployed is true when services were rendered and applied (or found due no work) in this
	// reconcile, so services and resources below replace what status held.
	deployed bool
	// corrections is true when this reconcile only handled drift watches saw (correctDrifts):
	// it rendered nothing, and looked only at the drifted objects.
	corrections bool
	// settle, when set, reads the whole status object and takes in what the corrections did,
	// before the status is computed (correctDrifts leaves it to the recording, recordings.go);
	// recording is true in a recording in the background, whose turn readWhole need not wait
	// for.
	settle    func(context.Context) error
	recording bool
	requested string
	// handled are the request values this reconcile found, recorded with requested.
	handled  *holdfastv1.HandledRequests
	services []serviceOutcome
	// unkept are the services whose rendering could not be kept on the hub.
	unkept []rendercache.Unkept
	// resources is the new inventory, replacing status.resources when set.
	resources []holdfastv1.ResourceStatus
	// withdrawn counts objects of removed services deleted in this reconcile; withdrawErr is a
	// failure to delete some.
	withdrawErr error
	// drifts are the drifts watches saw since the last reconcile, oldest first.
	drifts []holdfastv1.DriftRecord
	// previous are the status entries before this reconcile, by object.
	previous inventory.Index
	// decisions are drift handling's decisions on drifted objects in this reconcile.
	decisions driftDecisions
	// freshDrifts is how many of status.drifts (the first ones) this reconcile added, and
	// correctedDrifts the indices of those it marked corrected.
	freshDrifts     int
	correctedDrifts []int
	// unrecorded are the records earlier status patches could not write (memory.keepUnrecorded),
	// which this one writes; statusComputed is set once the status is computed.
	unrecorded     []holdfastv1.DriftRecord
	statusComputed bool
	// policies are the services' drift policies (see policy).
	policies map[string]*drift.Policy
	// policyProblems are parts of the drift policy that cannot be used.
	policyProblems []string
	// watchNotes say what the drift watches cover less than everywhere (watchInventory).
	watchNotes []string
	// nextWindow: some drift waits for a correction window; the reconcile comes back when the
	// next one opens.
	nextWindow time.Time
	// takenFrom names the MultiClusterServices whose objects this reconcile took over.
	takenFrom map[string]bool
	// contended are the status objects of other registrations of the cluster that this
	// reconcile found new conflicts with (contend).
	contended   map[types.NamespacedName]bool
	contendedMu sync.Mutex
	// others are what the service set declares through the other registrations of the cluster
	// (otherDeclarations), read once per reconcile.
	others     map[apply.Ref]otherDeclaration
	othersOnce sync.Once
	// summary is status.resources as stored when the inventory is kept in shards, and shards
	// those shards as read (see inventory_store.go); inventoryProblem is set when one is
	// missing: then nothing is deployed, pruned or withdrawn.
	summary          []holdfastv1.ResourceStatus
	shards           inventory.Shards
	inventoryProblem *problem
	// part, when set, says that css.Status.Resources holds only a part of the inventory (see
	// inventory_part.go), and uncounted how many InSync entries it leaves out; wholeOnly stops
	// readPart after a part turned out not to be enough.
	part      *inventory.Part
	uncounted int
	wholeOnly bool

	// revision is the snapshot of services and templates the status object deploys (see
	// loadRevision), nil when it follows the service set as it is; revisionProblem says why the
	// one it names cannot be read.
	revision        *rollout.Snapshot
	revisionProblem *problem
	// preview is the preview of spec.previewRevision this reconcile made, for status.preview.
	preview *holdfastv1.ClusterPreview

	// admission is what the cluster needs for the service set's admission policies, drift
	// attribution and prevention (loadAdmission); nil when this reconcile did not look.
	admission []*admissionState

	// checks are the service set's compiled health checks (healthChecks), once per reconcile;
	// checksErr why they do not compile.
	checks    *healthcheck.Checks
	checksErr error
}

// policy returns the drift policy of one of the service set's services, resolved once per
// reconcile.
func (s *scope) policy(svc holdfastv1.Service) *drift.Policy {
	if p, ok := s.policies[svc.Name]; ok {
		return p
	}
	if s.policies == nil {
		s.policies = map[string]*drift.Policy{}
	}
	p := drift.PolicyFor(s.mcs, svc)
	s.policies[svc.Name] = &p
	return &p
}

// healthChecks returns the service set's health checks, compiled once per reconcile; nil, with
// checksErr set, when they do not compile (kstatus judges every kind then).
func (s *scope) healthChecks() *healthcheck.Checks {
	if s.checks == nil && s.checksErr == nil {
		s.checks, s.checksErr = healthcheck.Compile(s.mcs.Spec.HealthChecks)
	}
	return s.checks
}

// clusterWait is how soon a reconcile that cannot reach its cluster comes back: at once when
// only this process's connection is awaited (the Cluster is Connected: a restart), when the
// backoff of a cluster that let requests time out ends, else after DefaultClusterWait.
// Deploying and withdrawing wait alike.
func (s *scope) clusterWait() time.Duration {
	switch {
	case s.awaitingConnection:
		return connectionWait
	case !s.unresponsiveUntil.IsZero():
		return max(s.unresponsiveUntil.Sub(s.now), connectionWait)
	}
	return DefaultClusterWait
}

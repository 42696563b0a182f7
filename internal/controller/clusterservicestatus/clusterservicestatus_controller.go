package clusterservicestatus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/alerting"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller/interrupt"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/inventory"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/notify"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/rollout"
	"holdfast.dev/holdfast/internal/scheduling"
	"holdfast.dev/holdfast/internal/sharding"
	"holdfast.dev/holdfast/internal/templatesource"
	"holdfast.dev/holdfast/internal/tenancy"
)

// Defaults of the Reconciler.
const (
	// DefaultClusterWait is how often a ClusterServiceStatus whose Cluster is not reachable is
	// looked at again; the Cluster's own status changes bring it back sooner.
	DefaultClusterWait = time.Minute
	// connectionWait is how soon a ClusterServiceStatus whose Cluster is Connected, but not yet
	// connected in this process (it just started, or took the cluster over from another
	// replica), is looked at again if nothing brings it back before: the Cluster's status does
	// not change when this process connects, the registry tells (onConnected), and this is for
	// when that news was dropped.
	connectionWait = 5 * time.Second
	// statusPatchTimeout bounds the status write of a reconcile whose work ended in time; the
	// reconcile's own deadline does not, so that work done is recorded on a slow hub.
	statusPatchTimeout = 30 * time.Second
)

// Reconciler deploys a MultiClusterService's services to one Cluster.
type Reconciler struct {
	// Client reads the hub's objects from the cache and writes status.
	Client client.Client
	// APIReader reads Secrets and the status objects being reconciled straight from the API
	// server (the cache holds status objects without their inventories).
	APIReader client.Reader
	// WholeCache says the cache holds status objects whole (a Pull cluster's agent, which caches
	// its own few): readWhole then takes the cached copy when it is known to be new enough, and
	// reads the API server only when it is not (wholecache.go). Statuses, set with it, keeps
	// what was read outside the process.
	WholeCache bool
	Statuses   StatusStore
	// RenderingsNamespace is where the rendered Helm services are kept (package rendercache):
	// the controller's own namespace, the only one where it writes Secrets.
	RenderingsNamespace string
	// Works, set in a Pull cluster's agent only, is where its declarations come from instead of
	// the hub's service sets and templates (declarations.go).
	Works Works
	// Unrecorded, set in a Pull cluster's agent only, keeps the drift records waiting for a
	// status patch past a restart (unrecorded.go).
	Unrecorded UnrecordedStore
	// Fleet gives the connection to each target cluster.
	Fleet *fleet.Registry
	// Charts fetches Helm charts.
	Charts render.ChartSource
	// Artifacts downloads the artifacts ServiceTemplates pin in status.artifact.
	Artifacts templatesource.Artifacts
	// Recorder emits Events on ClusterServiceStatuses.
	Recorder events.EventRecorder
	// Notifier, if set, sends drift notifications to the service sets' webhooks.
	Notifier *notify.Dispatcher
	// Alerts, if set, sends the same events, and a cluster's Unhealthy and ClusterUnreachable,
	// to the AlertRules that select them.
	Alerts *alerting.Router
	// Clock is injectable, so tests can prove the periodic reconcile without waiting hours.
	Clock clock.PassiveClock
	// Applied is what the status objects applied to each cluster, which the target caches keep
	// in full (drift.Applied); the caches' transform must be its (fleet.Options.CacheTransform).
	// A record of its own when nil.
	Applied *drift.Applied
	// Tenancy limits the Clusters, templates and Secrets a service set may use (package
	// tenancy): a status object its service set would not select deploys nothing.
	Tenancy tenancy.Policy
	// Shard, if set, is this replica's share of the clusters: status objects of other
	// replicas' clusters are left to them (package sharding).
	Shard *sharding.Coordinator
	// BreakGlass are users and groups every service set's drift.prevention lets through, beside
	// the set's own (spec.drift.breakGlass): the platform's on-call, whom no tenant's service
	// set may lock out of its clusters.
	BreakGlass holdfastv1.BreakGlass

	// recheck receives status objects to reconcile again: those whose objects another
	// MultiClusterService just took over, so they report the Conflict at once; drifted those
	// whose objects drifted, queued first (scheduling.DriftPriority).
	recheck chan event.TypedGenericEvent[*holdfastv1.ClusterServiceStatus]
	drifted chan event.TypedGenericEvent[*holdfastv1.ClusterServiceStatus]
	// recovered receives Clusters whose link recovered (see onRecovered); connected those this
	// process just connected to (see onConnected).
	recovered chan event.TypedGenericEvent[*holdfastv1.Cluster]
	connected chan event.TypedGenericEvent[*holdfastv1.Cluster]
	// watches report changes to managed objects in ContinuousWithDriftDetection mode.
	watches *drift.Watches
	// ownWrites are Holdfast's own writes on the targets, which tell them from someone else's
	// made under its field manager's name (targetClient notes them, onDrift asks).
	ownWrites *drift.OwnWrites
	// memory is what this process knows about status objects between reconciles.
	memory *memory
	// fights counts recent corrections per object, to notice fights (drift.Fights).
	fights *drift.Fights
	// prunedWork is, per Pull cluster's status object, the digest of the work whose older works
	// this process deleted (publish.go).
	prunedWork sync.Map
	// healthReads coalesces the health re-reads watch events ask for (onUpdate).
	healthReads delayed
	// recordings are the drift corrections being recorded in the background (recordings.go).
	recordings recordings
	// restoreChecks coalesces the comparisons watch events ask for to see whether an object
	// whose drift waits was put back (onUpdate).
	restoreChecks delayed
	// revisions are the rollout revisions decoded lately, by ControllerRevision UID (see
	// loadRevision).
	revisions *lru.Cache
	// configMaps keeps the ConfigMaps templates read, at the version read (the hub's cache
	// holds none of their data).
	configMaps *templatesource.RecentConfigMaps
	// InventoryShardSize is how many inventory entries a status object holds itself, and about
	// how many each of its ClusterServiceInventory shards holds beyond that (package
	// inventory); inventory.DefaultShardSize when 0.
	InventoryShardSize int
	// routine bounds the routine reconciles running at once (package scheduling).
	routine *scheduling.RoutineSlots
	// queue is the controller's queue (package scheduling), once the controller started.
	queue atomic.Pointer[scheduling.Queue]
}

// +kubebuilder:rbac:groups=holdfast.dev,resources=clusterservicestatuses,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=holdfast.dev,resources=clusterservicestatuses/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=holdfast.dev,resources=clusterservicestatuses/finalizers,verbs=update
// +kubebuilder:rbac:groups=holdfast.dev,resources=multiclusterservices;servicetemplates;holdfastclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// The kept renderings (package rendercache) are the only Secrets the controller writes, all in
// its own namespace (the release namespace, where the chart grants this rule).
// +kubebuilder:rbac:groups="",resources=secrets,verbs=create;update;delete,namespace=holdfast-system

// Reconcile deploys, prunes or withdraws, and writes the status once, at the end.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	routine := !r.memory.hasDrifts(req.NamespacedName)
	if routine && r.recordings.postpone(req.NamespacedName) {
		// Its last correction is being recorded, which this reconcile would wait for holding
		// the status object (and the next drift with it): it comes back once that is done.
		return ctrl.Result{}, nil
	}
	if r.routine != nil && routine {
		release, ok := r.routine.Acquire(ctx)
		if !ok {
			// A drift was queued while this waited for a routine slot: its worker goes to it.
			return scheduling.WithRoutinePriority(ctrl.Result{RequeueAfter: time.Millisecond}), nil
		}
		defer release()
	}
	// The cache holds status objects without their inventories (see CacheTransform): the whole
	// object is read when it is needed (readWhole), which a drift correction is not.
	css := &holdfastv1.ClusterServiceStatus{}
	if err := r.Client.Get(ctx, req.NamespacedName, css); err != nil {
		return ctrl.Result{}, r.forgetIfGone(req.NamespacedName, err)
	}
	ctx, leave, ok := r.Shard.Begin(ctx, client.ObjectKey{Namespace: css.Namespace, Name: css.Spec.Cluster})
	if !ok {
		return ctrl.Result{}, nil
	}
	s := &scope{css: css, before: css.DeepCopy(), now: r.Clock.Now(), drifts: r.memory.takeDrifts(req.NamespacedName), ownWrites: r.ownWrites}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("multiClusterService", css.Spec.MultiClusterService, "cluster", css.Spec.Cluster))
	// The status is written once, at the end; a recording in the background holds the cluster
	// until it is written.
	defer func() {
		if !r.finish(ctx, s, &res, &retErr, leave) {
			leave()
		}
	}()
	// Runs before the status patch above, which may still ask to come back at once, with the
	// priority this reconcile had.
	defer func() { res = scheduling.WithRoutinePriority(res) }()
	return r.reconcileObject(ctx, s)
}

// finish ends a reconcile: it records the outcome with the one status patch, in the background
// for a reconcile that only corrected drifts (recordings.go): then leave, the cluster's share, is
// handed over to the recording and finish returns true. When its context ended (a timeout marks
// the status object for a comparison, which finds again what it took from memory), it records
// only the drifts it put back (interrupted).
func (r *Reconciler) finish(ctx context.Context, s *scope, res *ctrl.Result, retErr *error, leave func()) (handedOver bool) {
	key := client.ObjectKeyFromObject(s.css)
	if errors.Is(*retErr, errInventoryIncomplete) {
		res.RequeueAfter, *retErr = inventoryRetry, nil
	}
	if ended, err := interrupt.Result(ctx); ended {
		r.interrupted(ctx, s, err)
		*res, *retErr = ctrl.Result{}, err
		return false
	}
	if s.corrections && *retErr == nil && r.recordings.inBackground(key) {
		r.recordInBackground(ctx, s, leave, res.RequeueAfter)
		return true
	}
	again, err := r.record(ctx, s)
	switch {
	case err != nil:
		*retErr = kerrors.NewAggregate([]error{*retErr, err})
	case again:
		*res, *retErr = ctrl.Result{RequeueAfter: conflictRetry}, nil
	default:
		r.recordings.recorded(key)
	}
	return false
}

// interrupted ends a reconcile whose context ended (err: the timeout, nil on a shutdown). The
// drifts it put back (correctDrifts finishes what it began) are recorded all the same, in the
// foreground: the next reconcile, of this process or the next, finds those objects in sync and
// would never know. A status patch that fails keeps them (keepUnwritten), which a Pull agent
// keeps on its cluster for the next agent (UnrecordedStore).
func (r *Reconciler) interrupted(ctx context.Context, s *scope, err error) {
	key := client.ObjectKeyFromObject(s.css)
	if err != nil {
		r.memory.markRecheck(key, s.css.Spec.Cluster)
	}
	if s.settle == nil {
		return
	}
	if _, rerr := r.record(ctx, s); rerr != nil {
		ctrl.LoggerFrom(ctx).Error(rerr, "Recording the drifts put back before the reconcile ended failed; kept for the next status patch")
	}
}

// reconcileObject reads the service set and the Cluster of a status object, and withdraws,
// waits or deploys.
func (r *Reconciler) reconcileObject(ctx context.Context, s *scope) (ctrl.Result, error) {
	css := s.css
	if err := r.loadServiceSet(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	mcs := s.mcs
	r.loadCluster(ctx, s)

	if !css.DeletionTimestamp.IsZero() {
		s.deleting = true
		return r.reconcileDelete(ctx, s)
	}
	if r.agent() && (mcs == nil || !controllerutil.ContainsFinalizer(css, holdfastv1.CleanupFinalizer)) {
		// The hub has yet to publish the work, or to guarantee its withdrawal with the
		// finalizer: the status object's annotation or finalizer changing brings it back.
		s.noWork = true
		return ctrl.Result{}, nil
	}
	if mcs == nil {
		// Nothing declares this pair any more, and the hub may run no garbage collector.
		if err := r.Client.Delete(ctx, css); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting ClusterServiceStatus %s of a deleted MultiClusterService: %w", klog.KObj(css), err)
		}
		return ctrl.Result{}, nil
	}
	added, err := r.ensureFinalizer(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if added {
		return ctrl.Result{RequeueAfter: time.Millisecond}, nil
	}
	if mcs.Spec.Paused && !r.publishes(s) {
		// The hub publishes a paused service set's work all the same for a Pull cluster: its
		// agent, which would otherwise go on with the work it has, reads the pause from it.
		return ctrl.Result{}, nil
	}
	if s.cluster != nil && !r.agent() && r.membership(mcs, s.cluster) == rollout.NotSelected {
		// Not made by a selection (or no longer matching, and about to be withdrawn by the
		// MultiClusterService controller): nothing is deployed through it.
		s.clusterProblem = &problem{holdfastv1.NotSelectedReason, fmt.Sprintf(
			"MultiClusterService %s does not select Cluster %s/%s: nothing is deployed", mcs.Name, s.cluster.Namespace, s.cluster.Name)}
		return ctrl.Result{}, nil
	}
	if s.clusterProblem != nil {
		r.previewIfWanted(ctx, s)
		return ctrl.Result{RequeueAfter: s.clusterWait()}, nil
	}
	if css.Spec.Held && !r.agent() {
		return r.reconcileHeld(ctx, s)
	}
	if r.loadRevision(ctx, s); s.revisionProblem != nil {
		return ctrl.Result{RequeueAfter: revisionRetry}, nil
	}
	if r.publishes(s) {
		return r.publish(ctx, s)
	}
	res, err := r.reconcileDeploy(ctx, s)
	if err == nil {
		if s.corrections && r.previewWanted(s) {
			// Corrections first, recorded on their own; the preview right after.
			return ctrl.Result{RequeueAfter: time.Millisecond}, nil
		}
		r.previewIfWanted(ctx, s)
	}
	return res, err
}

// ensureFinalizer adds the cleanup finalizer to a status object that has none yet, and only
// that: added tells the reconcile to end there and come back at once, as Cluster API and Flux
// do, so that nothing is deployed through a status object whose withdrawal is not guaranteed.
// The status patch that ends the reconcile reads the object anew (readWhole).
func (r *Reconciler) ensureFinalizer(ctx context.Context, s *scope) (added bool, _ error) {
	if controllerutil.ContainsFinalizer(s.css, holdfastv1.CleanupFinalizer) {
		return false, nil
	}
	patch := client.MergeFromWithOptions(s.css.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(s.css, holdfastv1.CleanupFinalizer)
	if err := r.Client.Patch(ctx, s.css, patch); client.IgnoreNotFound(err) != nil {
		return true, fmt.Errorf("adding the finalizer to ClusterServiceStatus %s: %w", klog.KObj(s.css), err)
	}
	return true, nil
}

// membership is how mcs selects c, as the MultiClusterService controller decides (a selector
// that cannot be used selects nothing).
func (r *Reconciler) membership(mcs *holdfastv1.MultiClusterService, c *holdfastv1.Cluster) rollout.Membership {
	sel, err := rollout.NewSelection(r.Tenancy, mcs)
	if err != nil {
		return rollout.NotSelected
	}
	return sel.Of(c)
}

// loadHubCluster reads the Cluster key and, unless it is a Pull cluster, its connection.
func (r *Reconciler) loadHubCluster(ctx context.Context, s *scope, key client.ObjectKey) {
	c := &holdfastv1.Cluster{}
	if err := r.Client.Get(ctx, key, c); err != nil {
		if apierrors.IsNotFound(err) {
			r.forgetCluster(key)
			s.clusterProblem = &problem{holdfastv1.ClusterNotFoundReason, fmt.Sprintf("Cluster %s not found", key)}
		} else {
			s.clusterProblem = &problem{holdfastv1.ClusterNotReadyReason, fmt.Sprintf("reading Cluster %s: %v", key, err)}
		}
		return
	}
	s.cluster = c
	switch {
	case c.Spec.Paused:
		s.clusterProblem = &problem{holdfastv1.ClusterPausedReason, fmt.Sprintf("Cluster %s is paused", key)}
	case c.Pull():
		// Its agent connects to the hub and applies; the hub publishes, whether the agent
		// reports now or not, and has no connection to it.
	case !conditions.IsTrue(c, holdfastv1.ClusterConnectedCondition):
		msg := fmt.Sprintf("Cluster %s is not connected", key)
		if cc := conditions.Get(c, holdfastv1.ClusterConnectedCondition); cc != nil && cc.Message != "" {
			msg += " (" + cc.Reason + ": " + cc.Message + ")"
		}
		s.clusterProblem = &problem{holdfastv1.ClusterNotReadyReason, msg}
	default:
		r.useConnection(s, key)
	}
}

// useConnection takes this process's connection to the cluster key; a problem is a wait.
func (r *Reconciler) useConnection(s *scope, key client.ObjectKey) {
	if s.conn = r.Fleet.Get(key); s.conn == nil {
		s.clusterProblem = &problem{holdfastv1.ClusterNotReadyReason, fmt.Sprintf("no connection to Cluster %s yet", key)}
		s.awaitingConnection = true
	} else if retry, ok := s.conn.Unresponsive(); ok {
		// Its requests would fail at once: wait without holding a worker.
		s.clusterProblem = &problem{holdfastv1.ClusterUnresponsiveReason, fmt.Sprintf(
			"Cluster %s let requests time out: nothing is sent to it until %s, then one request at a time until one is answered",
			key, retry.UTC().Format(time.RFC3339))}
		s.unresponsiveUntil = retry
	}
}

// reconcileDelete withdraws (or orphans) everything deployed, then lets the object go.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(s.css, holdfastv1.CleanupFinalizer) {
		return ctrl.Result{}, nil
	}
	if err := r.readWhole(ctx, s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	css := s.css
	log := ctrl.LoggerFrom(ctx)
	switch {
	case css.Spec.CleanupPolicy == holdfastv1.DeletionOrphan || len(inventoryOf(css.Status.Resources, "")) == 0:
		log.Info("Leaving deployed objects in place", "cleanupPolicy", css.Spec.CleanupPolicy, "objects", len(css.Status.Resources))
	case s.mcs != nil && s.mcs.Spec.SyncMode == holdfastv1.SyncModeDryRun:
		// DryRun changes nothing, not even on the way out.
		log.Info("DryRun: leaving deployed objects in place", "objects", len(css.Status.Resources))
	case s.cluster == nil:
		// The Cluster is gone: there is nothing left to withdraw from.
		log.Info("Cluster deleted; nothing to withdraw from")
	case r.publishes(s):
		// Its agent withdraws what the inventory it writes lists; the deletion ends once that
		// is empty (the first case), or the Cluster is gone.
		if err := r.pruneWork(ctx, client.ObjectKeyFromObject(css)); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: pullWithdrawalCheck}, nil
	case s.clusterProblem != nil:
		return ctrl.Result{RequeueAfter: s.clusterWait()}, nil
	default:
		done, err := r.withdrawAll(ctx, s)
		if err != nil || !done {
			return ctrl.Result{}, err
		}
		if r.agent() {
			// The hub lets the status object go once the inventory written is empty.
			s.resources = []holdfastv1.ResourceStatus{}
			return ctrl.Result{}, nil
		}
	}
	if r.agent() {
		// Nothing to withdraw; the rest is the hub's.
		return ctrl.Result{}, nil
	}
	// The owner reference lets a garbage collector remove the kept renderings, but the hub may
	// run none.
	if err := r.pruneWork(ctx, client.ObjectKeyFromObject(css)); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.renderings().Delete(ctx, css); err != nil {
		return ctrl.Result{}, fmt.Errorf("deleting the renderings kept for ClusterServiceStatus %s: %w", klog.KObj(css), err)
	}
	if err := r.deleteInventory(ctx, css); err != nil {
		return ctrl.Result{}, err
	}
	before := css.DeepCopy()
	if controllerutil.RemoveFinalizer(css, holdfastv1.CleanupFinalizer) {
		// A patch, not an update: the object may have changed since it was read, and only the
		// finalizer is ours to remove.
		if err := r.Client.Patch(ctx, css, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		} else if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("removing the finalizer of ClusterServiceStatus %s: %w", klog.KObj(css), err)
		}
	}
	s.gone = true
	return ctrl.Result{}, nil
}

// conflictRetry is how soon a status object whose status patch met a newer version is
// reconciled again.
const conflictRetry = 50 * time.Millisecond

// record patches the status of the scope once the work is done (patchStatus). When the patch
// meets a newer version of the status object after objects were applied, it is tried once more
// on that version. again is true when it met one still: nothing is lost (the drifts were put
// back, and the next reconcile compares with the cluster again, as this one's findings were not
// written); it is read again shortly, without an error's backoff and log.
func (r *Reconciler) record(ctx context.Context, s *scope) (again bool, _ error) {
	// The work was done in time: its status is written even if the deadline passes while it is
	// (a slow hub), else what was applied would never be recorded, retry after retry.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), statusPatchTimeout)
	defer cancel()
	err := r.settleAndPatch(pctx, s)
	if errors.Is(err, inventory.ErrBeyondPart) {
		// The corrections changed more of the inventory than the part read: read it whole.
		ctrl.LoggerFrom(ctx).V(1).Info("Recording with the whole inventory", "reason", err.Error())
		s.whole, s.wholeOnly = false, true
		err = r.settleAndPatch(pctx, s)
	}
	if apierrors.IsConflict(err) && s.deployed {
		// What was applied must be recorded: if the status object is being deleted (the
		// cluster unmatched meanwhile), the next reconcile withdraws what the inventory lists,
		// and objects this one created would be left behind. The object is read anew, from
		// etcd, and the status computed again for it.
		s.whole, s.fresh = false, true
		err = r.settleAndPatch(pctx, s)
	}
	if err != nil {
		r.keepUnwritten(s)
	}
	if apierrors.IsConflict(err) {
		if s.deployed {
			r.memory.markRecheck(client.ObjectKeyFromObject(s.css), s.css.Spec.Cluster)
		}
		return true, nil
	}
	return false, err
}

// settleAndPatch takes in what corrections did (s.settle) on the status object as read now, and
// patches its status.
func (r *Reconciler) settleAndPatch(ctx context.Context, s *scope) error {
	if s.settle != nil {
		if err := s.settle(ctx); err != nil {
			return err
		}
	}
	return r.patchStatus(ctx, s)
}

// keepUnwritten keeps in memory what a reconcile could not record: the records of the drifts it
// put back, to be written by the next status patch (the next reconcile finds those objects in
// sync), and the other drifts it took, for the next reconcile to handle.
func (r *Reconciler) keepUnwritten(s *scope) {
	key := client.ObjectKeyFromObject(s.css)
	if s.end.IsZero() {
		s.end = r.Clock.Now()
	}
	kept := putBackRecords(s)
	r.memory.keepUnrecorded(key, s.css.Spec.Cluster, kept)
	r.memory.returnDrifts(key, s.css.Spec.Cluster, slices.DeleteFunc(slices.Clone(s.drifts), func(d holdfastv1.DriftRecord) bool {
		return slices.ContainsFunc(kept, func(k holdfastv1.DriftRecord) bool { return k.ResourceRef == d.ResourceRef })
	}))
}

// recordInBackground records a reconcile that only corrected drifts without holding its status
// object (recordings.go); leave gives the cluster's share back once it is written. What the
// queue would have done with the outcome, it is asked to: a conflict comes back shortly, an
// error with the usual backoff, and a visit sooner than requeue, the wait the reconcile
// returned, when what the recording took in asks for one (comeBackAfter: the retry of a
// refused correction, a health read), which the reconcile could not know when it returned.
func (r *Reconciler) recordInBackground(ctx context.Context, s *scope, leave func(), requeue time.Duration) {
	key := client.ObjectKeyFromObject(s.css)
	prev, end := r.recordings.begin(key)
	s.recording = true
	go func() {
		defer leave()
		defer end()
		if prev != nil {
			<-prev
		}
		again, err := r.record(ctx, s)
		q := r.queue.Load()
		req := ctrl.Request{NamespacedName: key}
		switch {
		case err != nil:
			// The next reconcile records in the foreground, where an error gets the backoff.
			ctrl.LoggerFrom(ctx).Error(err, "Recording a drift correction failed; the next reconcile records in the foreground")
			r.recordings.fail(key)
			if q != nil {
				q.AddRateLimited(req)
			}
		case q == nil:
		case again:
			q.AddAfter(req, conflictRetry)
		case requeue > 0:
			if after := r.comeBackAfter(s, requeue); after < requeue {
				q.AddWithOpts(priorityqueue.AddOpts{After: after, Priority: new(scheduling.RoutinePriority)}, req)
			}
		}
	}()
}

// patchStatus computes the status from the scope and patches it once.
func (r *Reconciler) patchStatus(ctx context.Context, s *scope) error {
	if s.published || s.noWork {
		// A Pull cluster's agent writes the status of what it applied, once it has a work.
		return nil
	}
	if s.gone {
		r.report(ctx, s)
		return nil
	}
	if s.awaitingConnection && conditions.Get(s.css, holdfastv1.ReadyCondition) != nil {
		// Nothing was learnt: the Cluster is Connected and this process has yet to connect to it
		// (it just started, or took the cluster over from another replica). What was recorded
		// stays: a readiness that went False and back would cost two status writes and two
		// Events per status object, and leave the MultiClusterService not Ready, for every
		// cluster a replica takes over.
		r.memory.returnDrifts(client.ObjectKeyFromObject(s.css), s.css.Spec.Cluster, s.drifts)
		return nil
	}
	if err := r.readWhole(ctx, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	key := client.ObjectKeyFromObject(s.css)
	s.end = r.Clock.Now()
	s.watchNotes = r.memory.watchNotes(key)
	s.unrecorded = r.memory.unrecordedDrifts(key)
	computeStatus(s)
	s.statusComputed = true
	r.recordTransitions(ctx, s)
	// After the patch, so the previous owner reads a status that lists what we took.
	defer r.recheckTakenFrom(ctx, s)
	if equality.Semantic.DeepEqual(s.before.Status, s.css.Status) {
		r.memory.forgetUnrecorded(key, s.css.Spec.Cluster, s.unrecorded)
		r.report(ctx, s)
		return nil
	}
	replaced := s.before.ResourceVersion
	if err := r.writeStatus(ctx, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("patching the status of ClusterServiceStatus %s: %w", klog.KObj(s.css), err)
	}
	r.memory.setRecorded(key, s.css.Spec.Cluster, s.css, replaced)
	r.memory.forgetUnrecorded(key, s.css.Spec.Cluster, s.unrecorded)
	r.report(ctx, s)
	return nil
}

// statusPatch is the merge patch from before to after, with optimistic locking: the status holds
// lists (inventory, drift history) that a patch from a stale read would roll back. The inventory,
// the bulk of a large status object, is left out of the computation when it did not change, as
// it does not after most reconciles, drift corrections included.
func statusPatch(before, after *holdfastv1.ClusterServiceStatus) (client.Patch, error) {
	b, a := *before, *after
	if equality.Semantic.DeepEqual(b.Status.Resources, a.Status.Resources) {
		b.Status.Resources, a.Status.Resources = nil, nil
	}
	data, err := client.MergeFromWithOptions(&b, client.MergeFromWithOptimisticLock{}).Data(&a)
	if err != nil {
		return nil, fmt.Errorf("computing the status patch of ClusterServiceStatus %s: %w", klog.KObj(after), err)
	}
	return client.RawPatch(types.MergePatchType, data), nil
}

// readWhole replaces the status object of the scope, read from the cache without its inventory
// and drift history, by the whole object, read from the API server (once per reconcile). It
// asks for a version at least as new as the cached one, which lets the API server answer from
// its watch cache instead of etcd.
func (r *Reconciler) readWhole(ctx context.Context, s *scope) error {
	if s.whole {
		return nil
	}
	css, err := r.readLatest(ctx, s)
	if err != nil {
		return err
	}
	return r.takeWhole(ctx, s, css)
}

// readLatest reads the status object of the scope from the API server, after the recordings of
// it in flight and no older than what they wrote (or the newest version, s.fresh), inventory
// as stored.
func (r *Reconciler) readLatest(ctx context.Context, s *scope) (*holdfastv1.ClusterServiceStatus, error) {
	key := client.ObjectKeyFromObject(s.css)
	if !s.recording {
		if err := r.recordings.wait(ctx, key); err != nil {
			return nil, fmt.Errorf("waiting for the last status patch of ClusterServiceStatus %s: %w", klog.KObj(s.css), err)
		}
	}
	atLeast := cmp.Or(s.readFrom, s.css.ResourceVersion)
	if rec := r.memory.recordedAt(key, atLeast); rec != nil {
		atLeast = rec.resourceVersion
	}
	if s.fresh {
		// The newest version, which a status patch met: a read from the watch cache may
		// answer with the one it replaced.
		atLeast = ""
	}
	css, err := r.readAtLeast(ctx, key, atLeast)
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.forgetStatus(key)
		}
		return nil, fmt.Errorf("reading ClusterServiceStatus %s: %w", klog.KObj(s.css), err)
	}
	return css, nil
}

// takeWhole makes css, just read, with its whole inventory the status object of the scope.
func (r *Reconciler) takeWhole(ctx context.Context, s *scope, css *holdfastv1.ClusterServiceStatus) error {
	key := client.ObjectKeyFromObject(css)
	s.part = nil
	if err := r.loadInventory(ctx, s, css); err != nil {
		if errors.Is(err, errInventoryIncomplete) {
			// Whole as far as it goes: the status says what is missing.
			s.css, s.before, s.whole = css, css.DeepCopy(), true
			r.memory.setRecorded(key, css.Spec.Cluster, nil, "")
		}
		return err
	}
	s.css, s.before, s.whole = css, css.DeepCopy(), true
	r.memory.setRecorded(key, css.Spec.Cluster, css, "")
	r.registerInventory(css, css.Status.Resources)
	if r.Statuses != nil {
		r.Statuses.KeepStatus(css)
	}
	return nil
}

// forgetIfGone forgets what this process knew of a status object that is gone, and returns
// the error of reading it otherwise.
func (r *Reconciler) forgetIfGone(key types.NamespacedName, err error) error {
	if apierrors.IsNotFound(err) {
		r.forgetStatus(key)
		return nil
	}
	return err
}

// onDrift asks for a reconcile of the status object of the service set owning a changed object.
// It runs on informer goroutines and never blocks.
//
// The owner is read from the object's annotation, which whoever may write objects on the target
// can set to anything: the change is dropped unless that status object exists, in the hub
// cache, for this very cluster and service set (ownsDrift). Only then does memory keep anything.
//
// A change Holdfast's field manager holds (claimed) is Holdfast's own write, passed on as an
// update, unless OwnWrites knows no such write: then it is someone else's under Holdfast's
// name, and drift. While a write of Holdfast's to the object is under way it cannot be told
// yet: the status object compares once it is done. The attribution stamp names the user only
// where the attribution policy is in force for the object (attributionInForce).
func (r *Reconciler) onDrift(cluster types.NamespacedName, c drift.Change) {
	if c.Deleted {
		r.ownWrites.Forget(cluster, c.Object)
	}
	if c.Compare {
		r.onCompare(cluster, c.Object)
		return
	}
	owner := c.Object.GetAnnotations()[holdfastv1.OwnerAnnotation]
	if owner == "" || drift.Exempt(c.Object) {
		return
	}
	key := types.NamespacedName{Namespace: cluster.Namespace, Name: naming.StatusName(owner, cluster.Name)}
	if len(c.Claimed) > 0 {
		afterWrites := func(o drift.Ownership) { r.afterOwnWrites(cluster, key, owner, c.Object, o) }
		switch own, waiting := r.ownWrites.JudgeOrWait(cluster, c.Object, c.OwnedDigest, afterWrites); {
		case waiting:
			return
		case own != drift.NotOwn:
			afterWrites(own)
			return
		}
		c.Verdict = c.ResolveClaim(false)
	}
	css := r.ownsDrift(key, owner, cluster)
	if css == nil {
		// Debug only: a flood of forged owners must not flood the log either.
		metrics.DriftEventIgnored(metrics.IgnoredUnknownOwner)
		ctrl.Log.WithName("drift").V(1).Info("Ignoring a change to an object whose owner annotation names no status object of its cluster",
			"cluster", cluster.String(), "statusObject", key.String(), "kind", c.Object.GetKind())
		return
	}
	ref := apply.RefOf(c.Object)
	service := c.Object.GetLabels()[holdfastv1.ServiceLabel]
	if declared, known := r.memory.declares(key, service, unversioned(ref)); known && !declared {
		// Labelled as the service set's, but not one of its objects on this cluster: another
		// cluster's on the same API server (a cluster registered twice, a shared test server),
		// an object it no longer declares (being pruned), or a copy someone labelled.
		metrics.DriftEventIgnored(metrics.IgnoredNotDeclared)
		return
	}
	c.ResourceVersion = c.Object.GetResourceVersion()
	rec := holdfastv1.DriftRecord{
		ResourceRef: fromRef(ref),
		Service:     service,
		DriftDetail: drift.DetailOf(c.TrustStamp(attributionInForce(css, c.Object)), r.Clock.Now(), holdfastv1.DriftDetectedByWatch),
	}
	// The records are asked when the report is taken (the hub cache holds no drift history).
	if drift.Superseded(r.ownWrites, cluster, rec, nil) {
		metrics.DriftEventIgnored(metrics.IgnoredSuperseded)
		return
	}
	if !c.Deleted && !c.Author.Time.IsZero() {
		// The API server records the change's time to the second only.
		metrics.ObserveDetection(rec.Kind, rec.DetectedTime.Sub(c.Author.Time.Time))
	}
	if !r.memory.addDrift(key, cluster.Name, rec) {
		msg := "Too many status objects with pending drifts; the reconcile finds this one by comparison"
		if !r.memory.markRecheck(key, cluster.Name) {
			msg = "Too many status objects with pending drifts and rechecks; the next full reconcile finds this one"
		}
		ctrl.Log.WithName("drift").V(1).Info(msg, "statusObject", key.String())
	}
	r.enqueueDrifted(key)
}

// ownsDrift returns the status object key, named after owner, the service set an object's
// annotation names, when it is one of cluster: it exists in the hub cache (a read that never
// blocks once the cache has synced, which it has before any watch reports) and is the status
// object of that service set on that cluster; else nil.
func (r *Reconciler) ownsDrift(key types.NamespacedName, owner string, cluster types.NamespacedName) *holdfastv1.ClusterServiceStatus {
	css := &holdfastv1.ClusterServiceStatus{}
	if err := r.Client.Get(context.Background(), key, css); err != nil || !statusOf(css, owner, cluster) {
		return nil
	}
	return css
}

// statusOf reports whether css is the status object of service set owner on cluster.
func statusOf(css *holdfastv1.ClusterServiceStatus, owner string, cluster types.NamespacedName) bool {
	return css.Namespace == cluster.Namespace && css.Spec.Cluster == cluster.Name && css.Spec.MultiClusterService == owner
}

// afterOwnWrites handles a change held by Holdfast's field manager once OwnWrites judged it:
// Holdfast's own write; or, when that could not be told while a write was under way, or the
// writes under way did not make it, someone else's under Holdfast's name, which the status object
// compares with the cluster.
func (r *Reconciler) afterOwnWrites(cluster, key types.NamespacedName, owner string, obj *unstructured.Unstructured, o drift.Ownership) {
	if o == drift.Own {
		r.onOwnWrite(cluster, obj)
		return
	}
	if r.ownsDrift(key, owner, cluster) != nil {
		r.enqueueRecheck(key, cluster.Name)
	}
}

// enqueueRecheck reconciles a status object, comparing with the cluster even if no full
// reconcile is due.
func (r *Reconciler) enqueueRecheck(key types.NamespacedName, cluster string) bool {
	r.memory.markRecheck(key, cluster)
	return r.enqueue(key)
}

// enqueue asks for a reconcile of a status object without blocking; false when the queue is
// full.
func (r *Reconciler) enqueue(key types.NamespacedName) bool { return send(r.recheck, key) }

// enqueueDrifted asks for a reconcile of a status object whose objects drifted, before routine
// work (scheduling.DriftPriority), without blocking; false when the queue is full.
func (r *Reconciler) enqueueDrifted(key types.NamespacedName) bool { return send(r.drifted, key) }

func send(ch chan event.TypedGenericEvent[*holdfastv1.ClusterServiceStatus], key types.NamespacedName) bool {
	css := &holdfastv1.ClusterServiceStatus{}
	css.Namespace, css.Name = key.Namespace, key.Name
	select {
	case ch <- event.TypedGenericEvent[*holdfastv1.ClusterServiceStatus]{Object: css}:
		return true
	default:
		return false
	}
}

// recheckTakenFrom asks for a reconcile of the status objects of the MultiClusterServices this
// reconcile took objects from, and of those of other registrations of the cluster it found new
// conflicts with. It never blocks the reconcile.
func (r *Reconciler) recheckTakenFrom(ctx context.Context, s *scope) {
	for owner := range s.takenFrom {
		key := types.NamespacedName{Namespace: s.css.Namespace, Name: naming.StatusName(owner, s.css.Spec.Cluster)}
		if !r.enqueueRecheck(key, s.css.Spec.Cluster) {
			ctrl.LoggerFrom(ctx).Info("Recheck queue full; the previous owner reports the conflict at its next reconcile", "owner", owner)
		}
	}
	r.recheckOtherRegistrations(ctx, s)
	for key := range s.contended {
		other := &holdfastv1.ClusterServiceStatus{}
		if err := r.Client.Get(ctx, key, other); err != nil || !r.enqueueRecheck(key, other.Spec.Cluster) {
			ctrl.LoggerFrom(ctx).Info("The other registration of the cluster reports the conflict at its next reconcile", "statusObject", key.String())
		}
	}
}

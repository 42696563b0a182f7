package clusterservicestatus

import (
	"context"
	"fmt"
	"maps"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller/index"
	"holdfast.dev/holdfast/internal/dependency"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/scheduling"
	"holdfast.dev/holdfast/internal/templatesource"
)

// SetupWithManager registers the controller and its watches; it needs package index's
// indexes. Every change that can alter what a cluster should hold brings its status objects
// back: the MultiClusterService (and its rollout asking for a preview), its templates and their
// ConfigMaps and Secrets, the Cluster's labels, annotations and connection, and its link
// recovering (fleet.OnRecovered); and a service of another service set its services depend on
// becoming ready, or no longer, on its cluster (dependentsOnCluster).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	opts = r.setup(opts)
	b := ctrl.NewControllerManagedBy(mgr).
		For(&holdfastv1.ClusterServiceStatus{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}), r.Shard.Predicate(clusterOfStatus), scheduling.NoteRequests(r.queue.Load))).
		Watches(&holdfastv1.MultiClusterService{}, scheduling.Triggered(handler.EnqueueRequestsFromMapFunc(r.forServiceSetChange), scheduling.RequestOrHub),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, previewRequested()))).
		Watches(&holdfastv1.ServiceTemplate{}, handler.EnqueueRequestsFromMapFunc(r.forTemplate),
			builder.WithPredicates(templatesource.Changed())).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.forSource("ConfigMap")), builder.OnlyMetadata).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.forSource("Secret")), builder.OnlyMetadata).
		Watches(&holdfastv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.forCluster),
			builder.WithPredicates(clusterChanged())).
		Watches(&holdfastv1.ClusterServiceStatus{}, handler.EnqueueRequestsFromMapFunc(r.conflictingNeighbours),
			builder.WithPredicates(inventoryChanged())).
		Watches(&holdfastv1.ClusterServiceStatus{}, handler.EnqueueRequestsFromMapFunc(r.dependentsOnCluster),
			builder.WithPredicates(readinessChanged()))
	b = r.watchChannels(b)
	if r.Shard != nil {
		// The status objects of a cluster handed over to this replica are compared with it anew:
		// their events, and the drift on the cluster, went to another replica.
		b = b.WatchesRawSource(r.Shard.Source(func(ctx context.Context, k types.NamespacedName) []reconcile.Request {
			c := &holdfastv1.Cluster{}
			c.Namespace, c.Name = k.Namespace, k.Name
			return r.forCluster(ctx, c)
		}))
	}
	if err := r.setupRecordedReports(mgr, opts); err != nil {
		return fmt.Errorf("setting up the reports of Pull clusters' drift records: %w", err)
	}
	return r.complete(mgr, b, opts)
}

// SetupAgentWithManager registers the controller of a Pull cluster's agent (r.Works set), whose
// manager reads only status objects, of the agent's Cluster's namespace on the hub (with
// index.SetupStatuses' indexes): a status object is reconciled when the hub publishes a new
// work for it (its annotation), changes it or deletes it, when a service another service set on
// its cluster waits for becomes ready or stops being (waitingBeside), and when the drift
// watches, the cluster's link or the periodic reconcile ask, as on the hub.
func (r *Reconciler) SetupAgentWithManager(mgr ctrl.Manager, opts controller.Options) error {
	if r.Works == nil {
		return fmt.Errorf("the agent's ClusterServiceStatus controller needs its Works")
	}
	opts = r.setup(opts)
	b := ctrl.NewControllerManagedBy(mgr).
		For(&holdfastv1.ClusterServiceStatus{}, builder.WithPredicates(agentChanged(), scheduling.NoteRequests(r.queue.Load))).
		Watches(&holdfastv1.ClusterServiceStatus{}, handler.EnqueueRequestsFromMapFunc(r.waitingBeside),
			builder.WithPredicates(readinessChanged()))
	return r.complete(mgr, r.watchChannels(b), opts)
}

// previewRequested passes the changes of a service set's status that ask its clusters for a new
// preview (holdfastv1.PreviewRequest): its rollout holding a revision for approval.
func previewRequested() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, okB := e.ObjectOld.(*holdfastv1.MultiClusterService)
		after, okA := e.ObjectNew.(*holdfastv1.MultiClusterService)
		if !okB || !okA {
			return false
		}
		request := holdfastv1.PreviewRequest(after.Status.Rollout)
		return request != "" && request != holdfastv1.PreviewRequest(before.Status.Rollout)
	}}
}

// agentChanged passes the changes to a status object that its agent acts on: its annotations (a
// new work published) and its spec, except a new revision alone, whose work the hub publishes a
// moment later (a fleet-wide change: seconds later) with a change of annotation. Acting on the
// revision first would write the status once for the old work (its observed generation) and
// once more for the new; a revision whose work never comes (the service set or the Cluster
// paused on the hub) is observed at the next periodic reconcile, with nothing to apply.
func agentChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, okB := e.ObjectOld.(*holdfastv1.ClusterServiceStatus)
		after, okA := e.ObjectNew.(*holdfastv1.ClusterServiceStatus)
		if !okB || !okA {
			return true
		}
		if !maps.Equal(before.Annotations, after.Annotations) {
			return true
		}
		if before.Generation == after.Generation {
			return false
		}
		newRevisionOnly := before.Spec.Revision != after.Spec.Revision &&
			reflect.DeepEqual(withRevision(before.Spec, ""), withRevision(after.Spec, ""))
		return !newRevisionOnly
	}}
}

// withRevision is spec with revision rev.
func withRevision(spec holdfastv1.ClusterServiceStatusSpec, rev string) holdfastv1.ClusterServiceStatusSpec {
	spec.Revision = rev
	return spec
}

// waitingBeside maps a status object whose services' readiness changed to the other status
// objects of its cluster that wait for their dependencies: the agent's dependentsOnCluster. The
// agent has no service sets to look dependsOn up in, and holds only its own cluster's status
// objects, so it brings back every one of them whose Applied condition waits on dependsOn; each
// judges its own dependencies again.
func (r *Reconciler) waitingBeside(ctx context.Context, obj client.Object) []reconcile.Request {
	css, ok := obj.(*holdfastv1.ClusterServiceStatus)
	if !ok {
		return nil
	}
	list := &holdfastv1.ClusterServiceStatusList{}
	if err := r.Client.List(ctx, list, client.InNamespace(css.Namespace)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Mapping a status object to those waiting beside it failed")
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		other := &list.Items[i]
		if other.Name == css.Name || other.Spec.Cluster != css.Spec.Cluster {
			continue
		}
		if c := conditions.Get(other, holdfastv1.AppliedCondition); c != nil && c.Status != metav1.ConditionTrue && dependencyReason(c.Reason) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(other)})
		}
	}
	return reqs
}

// setup makes the reconciler's state and returns the controller's options.
func (r *Reconciler) setup(opts controller.Options) controller.Options {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	r.recheck = make(chan event.TypedGenericEvent[*holdfastv1.ClusterServiceStatus], 1024)
	r.drifted = make(chan event.TypedGenericEvent[*holdfastv1.ClusterServiceStatus], 4096)
	r.recovered = make(chan event.TypedGenericEvent[*holdfastv1.Cluster], 1024)
	r.connected = make(chan event.TypedGenericEvent[*holdfastv1.Cluster], 1024)
	r.Fleet.OnRecovered(r.onRecovered)
	r.Fleet.OnConnected(r.onConnected)
	if r.Applied == nil {
		r.Applied = drift.NewApplied()
	}
	metrics.ReportTargetCaches(r.targetCacheUsage)
	r.watches = &drift.Watches{OnChange: r.onDrift, OnUpdate: r.onUpdate, OnSynced: r.onWatchSynced, Applied: r.Applied,
		Live: drift.NewLiveCopies(0)}
	r.Fleet.OnClosed(forgetCacheOf(r.watches.Forget))
	r.ownWrites = &drift.OwnWrites{}
	// A reconcile put off while its status object's recordings were in flight comes back.
	r.recordings.onDone = func(key types.NamespacedName) {
		if q := r.queue.Load(); q != nil {
			q.Add(ctrl.Request{NamespacedName: key})
		}
	}
	r.Fleet.OnClosed(func(c *fleet.Connection) {
		r.ownWrites.ForgetCluster(c.Key())
		if r.Fleet.Get(c.Key()) == nil { // removed, not replaced
			r.Applied.ForgetCluster(c.Key())
		}
	})
	r.memory, r.fights = newMemory(), &drift.Fights{}
	r.restoreUnrecorded()
	r.revisions = lru.New(decodedRevisions)
	r.configMaps = templatesource.NewRecentConfigMaps(templatesource.DefaultRecentConfigMapBytes)
	if opts.NewQueue == nil {
		opts.NewQueue = r.newQueue
	}
	if opts.RateLimiter == nil {
		opts.RateLimiter = scheduling.RateLimiter()
	}
	r.routine = scheduling.NewRoutineSlots(opts.MaxConcurrentReconciles)
	opts.MaxConcurrentReconciles = max(opts.MaxConcurrentReconciles, 1) + scheduling.DriftWorkers
	return opts
}

// watchChannels adds the sources the reconciler feeds itself: rechecks, drifts, and clusters
// whose link recovered or that this process connected to.
func (r *Reconciler) watchChannels(b *builder.Builder) *builder.Builder {
	return b.
		WatchesRawSource(source.Channel(r.recheck, scheduling.Triggered(handler.TypedEventHandler[*holdfastv1.ClusterServiceStatus, reconcile.Request](
			&handler.TypedEnqueueRequestForObject[*holdfastv1.ClusterServiceStatus]{}), scheduling.Always[*holdfastv1.ClusterServiceStatus](scheduling.TriggerRecheck)))).
		WatchesRawSource(source.Channel(r.drifted, scheduling.Triggered(scheduling.EnqueueDrifted(r.routine.DriftQueued), scheduling.Always[*holdfastv1.ClusterServiceStatus](scheduling.TriggerDrift)))).
		WatchesRawSource(source.Channel(r.recovered, scheduling.Triggered(handler.TypedEnqueueRequestsFromMapFunc(r.watchedOnCluster),
			scheduling.Always[*holdfastv1.Cluster](scheduling.TriggerRecheck)))).
		WatchesRawSource(source.Channel(r.connected, scheduling.Triggered(handler.TypedEnqueueRequestsFromMapFunc(
			func(ctx context.Context, c *holdfastv1.Cluster) []reconcile.Request { return r.forCluster(ctx, c) }),
			scheduling.Always[*holdfastv1.Cluster](scheduling.TriggerRecheck))))
}

// complete adds the drain of the recordings and builds the controller.
func (r *Reconciler) complete(mgr ctrl.Manager, b *builder.Builder, opts controller.Options) error {
	// On the way out, the corrections being recorded are recorded (within the manager's
	// graceful shutdown timeout).
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		r.recordings.drain()
		return nil
	})); err != nil {
		return fmt.Errorf("adding the recordings' drain: %w", err)
	}
	name := "clusterservicestatus"
	if r.agent() {
		// Apart from the hub's, for a process that runs both (the sandbox, the benchmarks).
		name = "agent"
	}
	return b.WithOptions(opts).
		Named(name).
		Complete(r)
}

// clusterOfStatus is the Cluster a status object deploys to, for sharding.
func clusterOfStatus(o client.Object) (types.NamespacedName, bool) {
	css, ok := o.(*holdfastv1.ClusterServiceStatus)
	if !ok {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: css.Namespace, Name: css.Spec.Cluster}, true
}

func requests(statuses []holdfastv1.ClusterServiceStatus) []reconcile.Request {
	reqs := make([]reconcile.Request, 0, len(statuses))
	for i := range statuses {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&statuses[i])})
	}
	return reqs
}

func (r *Reconciler) forServiceSet(ctx context.Context, obj client.Object) []reconcile.Request {
	statuses, err := index.StatusesOfServiceSet(ctx, r.Client, obj.GetName())
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Mapping a MultiClusterService to its status objects failed")
	}
	return requests(statuses)
}

// forServiceSetChange maps a change of a MultiClusterService to its status objects, and to
// those of the service sets depending on it that wait for their dependencies (or found them
// invalid): the service it declared, or the cycle it closed or broke, changes their verdict.
// Status objects that applied everything look again at their next full reconcile.
func (r *Reconciler) forServiceSetChange(ctx context.Context, obj client.Object) []reconcile.Request {
	reqs := r.forServiceSet(ctx, obj)
	dependents, err := index.ServiceSetsDependingOn(ctx, r.Client, obj.GetName())
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Mapping a MultiClusterService to the service sets depending on it failed")
	}
	for i := range dependents {
		statuses, err := index.StatusesOfServiceSet(ctx, r.Client, dependents[i].Name)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Mapping a MultiClusterService to the service sets depending on it failed")
		}
		for j := range statuses {
			if c := conditions.Get(&statuses[j], holdfastv1.AppliedCondition); c != nil && c.Status != metav1.ConditionTrue && dependencyReason(c.Reason) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&statuses[j])})
			}
		}
	}
	return reqs
}

// dependencyReason reports whether a reason of Applied comes from dependsOn.
func dependencyReason(reason string) bool {
	switch reason {
	case holdfastv1.WaitingForDependenciesReason, holdfastv1.InvalidDependencyReason, holdfastv1.CrossNamespaceReferenceReason:
		return true
	}
	return false
}

// dependentsOnCluster maps a status object whose services' readiness changed to the status
// objects, on the same cluster, of the service sets with a service depending on one of its set:
// one waiting for it applies at once rather than at its next full reconcile, hours away. Only
// service sets someone depends on (ServiceSetByDependency) cost more than an index lookup.
func (r *Reconciler) dependentsOnCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	css, ok := obj.(*holdfastv1.ClusterServiceStatus)
	if !ok {
		return nil
	}
	dependents, err := index.ServiceSetsDependingOn(ctx, r.Client, css.Spec.MultiClusterService)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Mapping a status object to those depending on its services failed")
	}
	var reqs []reconcile.Request
	for i := range dependents {
		key := client.ObjectKey{Namespace: css.Namespace, Name: naming.StatusName(dependents[i].Name, css.Spec.Cluster)}
		if err := r.Client.Get(ctx, key, &holdfastv1.ClusterServiceStatus{}); err == nil {
			reqs = append(reqs, reconcile.Request{NamespacedName: key})
		}
	}
	return reqs
}

// newQueue is controller.Options.NewQueue: the controller's queue, kept to add to from a
// recording in the background and to note requests on (scheduling.NoteRequests).
func (r *Reconciler) newQueue(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	q := scheduling.NewQueue(clock.RealClock{}, name, rl)
	r.queue.Store(q)
	return q
}

// readinessChanged passes updates of status objects in which a service became ready for the
// services depending on it, or stopped being, or appeared or went (dependency.Ready): what
// dependentsOnCluster needs, and not the rest of the status writes of a thousand clusters.
func readinessChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld.(*holdfastv1.ClusterServiceStatus), e.ObjectNew.(*holdfastv1.ClusterServiceStatus)
			if o == nil || n == nil {
				return false
			}
			return !maps.Equal(dependency.ReadyServices(o.Status.Services), dependency.ReadyServices(n.Status.Services))
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

func (r *Reconciler) forTemplate(ctx context.Context, obj client.Object) []reconcile.Request {
	sets, err := index.ServiceSetsUsingTemplate(ctx, r.Client, client.ObjectKeyFromObject(obj))
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Mapping a ServiceTemplate to MultiClusterServices failed")
	}
	var reqs []reconcile.Request
	for i := range sets {
		reqs = append(reqs, r.forServiceSet(ctx, &sets[i])...)
	}
	return reqs
}

func (r *Reconciler) forSource(kind string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		templates, err := index.TemplatesReading(ctx, r.Client, kind, client.ObjectKeyFromObject(obj))
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Mapping a template source to ServiceTemplates failed", "kind", kind)
		}
		var reqs []reconcile.Request
		for i := range templates {
			reqs = append(reqs, r.forTemplate(ctx, &templates[i])...)
		}
		return reqs
	}
}

func (r *Reconciler) forCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	statuses, err := index.StatusesOfCluster(ctx, r.Client, client.ObjectKeyFromObject(obj))
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Mapping a Cluster to its status objects failed")
	}
	return requests(statuses)
}

// onRecovered brings back the status objects of a Cluster whose link recovered, which may have
// missed drift while it was down (see comparisonDue). The Cluster's status may not change: a
// partition shorter than the connection grace keeps it Connected. It runs on the prober's
// goroutine and never blocks.
func (r *Reconciler) onRecovered(cluster types.NamespacedName) {
	if !offerCluster(r.recovered, cluster) {
		ctrl.Log.WithName("drift").Info("Recovery queue full; drift made during the partition is found at the next full reconcile",
			"cluster", cluster.String())
	}
}

// onConnected brings back the status objects of a Cluster this process just connected to:
// those that found no connection (awaitingConnection) wait for nothing else, and polling for it
// would keep a worker and the queue busy with every status object of a thousand clusters a
// replica takes over at once. It runs on a Cluster reconcile's goroutine and never blocks; when
// the channel is full, the waiting status objects come back after connectionWait.
func (r *Reconciler) onConnected(cluster types.NamespacedName) {
	offerCluster(r.connected, cluster)
}

// offerCluster sends the Cluster named cluster on ch unless ch is full, and reports whether it
// did. It never blocks.
func offerCluster(ch chan<- event.TypedGenericEvent[*holdfastv1.Cluster], cluster types.NamespacedName) bool {
	c := &holdfastv1.Cluster{}
	c.Namespace, c.Name = cluster.Namespace, cluster.Name
	select {
	case ch <- event.TypedGenericEvent[*holdfastv1.Cluster]{Object: c}:
		return true
	default:
		return false
	}
}

// onWatchSynced compares the cluster's status objects in drift-detection mode with the cluster
// once a new watch has listed what exists: a change made between their apply and that list (at a
// restart, a new kind) reached no watch as a change. It never blocks for long: the marks are in
// memory and the queue is only asked.
func (r *Reconciler) onWatchSynced(cluster types.NamespacedName) {
	ctx := context.Background()
	c := &holdfastv1.Cluster{}
	c.Namespace, c.Name = cluster.Namespace, cluster.Name
	for _, req := range r.watchedOnCluster(ctx, c) {
		r.enqueueRecheck(req.NamespacedName, cluster.Name)
	}
}

// forgetCacheOf adapts forget, which drops what is kept about a cache, to fleet.OnClosed: a
// connection the registry lets go (its Cluster deleted, paused or given a new kubeconfig) takes
// its cache with it, and the drift watches' handlers on that cache with the objects their
// informers hold. forget runs on a goroutine of its own: drift.Watches.Ensure holds the lock
// Forget takes while it asks a cluster about its API, and OnClosed's callers must not wait.
func forgetCacheOf(forget func(cache.Cache)) func(*fleet.Connection) {
	return func(c *fleet.Connection) { go forget(c.Cluster().GetCache()) }
}

// watchedOnCluster maps a Cluster to its status objects in drift-detection mode.
func (r *Reconciler) watchedOnCluster(ctx context.Context, c *holdfastv1.Cluster) []reconcile.Request {
	statuses, err := index.StatusesOfCluster(ctx, r.Client, client.ObjectKeyFromObject(c))
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Mapping a Cluster to its status objects failed")
	}
	var reqs []reconcile.Request
	for i := range statuses {
		if statuses[i].Status.SyncMode == holdfastv1.SyncModeContinuousWithDriftDetection {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&statuses[i])})
		}
	}
	return reqs
}

// clusterChanged passes Cluster changes that matter to deployment: labels and annotations
// (templates may use them), the server version, and the Connected condition.
func clusterChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld.(*holdfastv1.Cluster), e.ObjectNew.(*holdfastv1.Cluster)
			if o == nil || n == nil {
				return true
			}
			return !reflect.DeepEqual(o.Labels, n.Labels) || !reflect.DeepEqual(o.Annotations, n.Annotations) ||
				o.Spec.Paused != n.Spec.Paused || o.Status.Version != n.Status.Version ||
				conditions.IsTrue(o, holdfastv1.ClusterConnectedCondition) != conditions.IsTrue(n, holdfastv1.ClusterConnectedCondition)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// inventoryChanged passes status-object events that can free objects another service set is in
// conflict over: deletion, and an inventory that changed size.
func inventoryChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld.(*holdfastv1.ClusterServiceStatus), e.ObjectNew.(*holdfastv1.ClusterServiceStatus)
			// The cache holds counts, not inventories (see CacheTransform).
			return o != nil && n != nil && (n.Status.ResourceCount != o.Status.ResourceCount || !n.DeletionTimestamp.IsZero())
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// conflictingNeighbours maps a status object to the others on the same cluster that are in
// conflict, so they take over promptly what it gave up.
func (r *Reconciler) conflictingNeighbours(ctx context.Context, obj client.Object) []reconcile.Request {
	css, ok := obj.(*holdfastv1.ClusterServiceStatus)
	if !ok {
		return nil
	}
	statuses, err := index.StatusesOfCluster(ctx, r.Client, types.NamespacedName{Namespace: css.Namespace, Name: css.Spec.Cluster})
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Mapping a status object to its conflicting neighbours failed")
	}
	// A status object on its way out may be withdrawing objects a neighbour took over in the
	// meantime: every neighbour compares with the cluster again, even if nothing is due.
	leaving := !css.DeletionTimestamp.IsZero()
	var reqs []reconcile.Request
	for i := range statuses {
		if statuses[i].Name == css.Name || (!leaving && statuses[i].Status.ConflictCount == 0) {
			continue
		}
		key := client.ObjectKeyFromObject(&statuses[i])
		if leaving {
			r.memory.markRecheck(key, css.Spec.Cluster)
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: key})
	}
	return reqs
}

package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/agentaccess"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/sharding"
)

// Defaults of the Reconciler's intervals.
const (
	DefaultProbeInterval      = 10 * time.Second
	DefaultProbeRetryInterval = 2 * time.Second
	DefaultConnectionGrace    = 40 * time.Second
	// DefaultStatusHeartbeat is as often as the kubelet reports an unchanged node status: a
	// change of state is written at once, and nothing decides on the probe times, so a shorter
	// one costs the hub writes and nothing else (a thousand healthy clusters: 3.3 a second,
	// where a minute made 16.7, most of the hub's writes during a rollout).
	DefaultStatusHeartbeat = 5 * time.Minute
)

// Reconciler keeps one fleet connection per Cluster and reports its health.
type Reconciler struct {
	// Client reads Clusters and Secret metadata from the cache and patches status.
	Client client.Client
	// APIReader reads Secrets straight from the API server, so that Secret data is never cached.
	APIReader client.Reader
	// Version is the hub's own version, which Pull clusters' agents are judged against
	// (agentaccess.Support); version.Get's when empty.
	Version string
	// Fleet holds the connections.
	Fleet *fleet.Registry
	// Recorder emits Events on Clusters.
	Recorder events.EventRecorder
	// Clock is injectable for tests; defaults to the real clock.
	Clock clock.PassiveClock
	// ProbeInterval is the time between two health probes of a cluster.
	ProbeInterval time.Duration
	// ProbeRetryInterval, when shorter, replaces ProbeInterval after a failed probe while the
	// cluster is still Connected, so that the end of a short partition is seen within seconds
	// (and what was missed during it looked at again, see fleet.Connection.MarkConnected).
	ProbeRetryInterval time.Duration
	// ConnectionGrace is how long after the last successful probe failures keep the cluster Connected.
	ConnectionGrace time.Duration
	// StatusHeartbeat is the longest time a healthy Cluster's probe times go unwritten.
	StatusHeartbeat time.Duration
	// Shard, if set, is this replica's share of the clusters: other replicas' Clusters are left
	// to them (package sharding).
	Shard *sharding.Coordinator
}

// +kubebuilder:rbac:groups=holdfast.dev,resources=holdfastclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=holdfast.dev,resources=holdfastclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile connects to one Cluster, probes it and writes its status once, at the end.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	c := &holdfastv1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, c); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("reading Cluster %s: %w", req.NamespacedName, err)
	}
	if !c.DeletionTimestamp.IsZero() {
		r.forget(req.NamespacedName)
		if controllerutil.ContainsFinalizer(c, agentaccess.Finalizer) {
			return ctrl.Result{}, r.withdrawAgent(ctx, c)
		}
		return ctrl.Result{}, nil
	}
	ctx, leave, ok := r.Shard.Begin(ctx, req.NamespacedName)
	if !ok {
		return ctrl.Result{}, nil
	}
	defer leave()

	s := &scope{cluster: c, before: c.DeepCopy(), now: r.Clock.Now()}
	defer func() {
		if err := r.patchStatus(ctx, s); err != nil {
			retErr = kerrors.NewAggregate([]error{retErr, err})
		}
	}()

	if c.Spec.Paused {
		s.paused = true
		r.Fleet.Remove(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	switch {
	case c.Pull():
		if err := r.ensureAgentFinalizer(ctx, c); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.reconcileAgent(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	case controllerutil.ContainsFinalizer(c, agentaccess.Finalizer):
		// Pull no more: its agent's access ends.
		if err := r.withdrawAgent(ctx, c); err != nil {
			return ctrl.Result{}, err
		}
		fallthrough
	default:
		r.reconcileConnection(ctx, s)
	}
	if err := r.findDuplicates(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.requeueAfter(s)}, nil
}

// requeueAfter schedules the next probe. A declaration error waits for the Secret or the Cluster
// to change, which the watches report; anything else is probed again after a jittered interval,
// a shorter one while probes fail within the grace.
func (r *Reconciler) requeueAfter(s *scope) time.Duration {
	if s.connectErr != nil {
		return 0
	}
	interval := r.ProbeInterval
	if s.probeErr != nil && withinGrace(s, r.ConnectionGrace) {
		interval = min(interval, r.ProbeRetryInterval)
	}
	if s.cluster.Pull() && s.probeErr == nil && !s.lastConnected.IsZero() {
		// A Pull cluster is not probed: its agent renews its Lease, and the renewals alone wake
		// no reconcile (leaseChanged). The next look is when the Lease would expire.
		interval = max(s.lastConnected.Add(max(r.ConnectionGrace, s.leaseGrace)).Sub(s.now), r.ProbeRetryInterval)
	}
	jitter := time.Duration(rand.Int64N(int64(interval)/10 + 1))
	return interval + jitter
}

func (r *Reconciler) forget(key client.ObjectKey) {
	r.Fleet.Remove(key)
	metrics.ForgetClusterHealth(key.Namespace, key.Name)
	metrics.ForgetCluster(key.String())
}

// patchStatus computes every condition from the scope and patches the status once.
func (r *Reconciler) patchStatus(ctx context.Context, s *scope) error {
	computeStatus(s, r.ConnectionGrace, r.StatusHeartbeat)
	r.recordTransitions(ctx, s)
	recordMetrics(s)
	if equality.Semantic.DeepEqual(s.before.Status, s.cluster.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, s.cluster, client.MergeFrom(s.before)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("patching the status of Cluster %s: %w", client.ObjectKeyFromObject(s.cluster), err)
	}
	return nil
}

// recordTransitions emits an Event and a log line when the Connected condition changes.
func (r *Reconciler) recordTransitions(ctx context.Context, s *scope) {
	before := conditions.Get(s.before, holdfastv1.ClusterConnectedCondition)
	after := conditions.Get(s.cluster, holdfastv1.ClusterConnectedCondition)
	if after == nil || (before != nil && before.Status == after.Status && before.Reason == after.Reason) {
		return
	}
	log := ctrl.LoggerFrom(ctx)
	eventType := corev1.EventTypeNormal
	if after.Status == metav1.ConditionFalse {
		eventType = corev1.EventTypeWarning
	}
	log.Info("Cluster connection changed", "status", after.Status, "reason", after.Reason, "message", after.Message)
	if r.Recorder != nil {
		r.Recorder.Eventf(s.cluster, nil, eventType, after.Reason, "Probe", "%s", after.Message)
	}
}

// recordMetrics reports whether the Cluster is Connected, and counts a failed probe.
func recordMetrics(s *scope) {
	c := s.cluster
	metrics.SetClusterConnected(c.Namespace, c.Name, conditions.IsTrue(c, holdfastv1.ClusterConnectedCondition))
	if s.probeErr != nil {
		metrics.ClusterProbeFailed(c.Namespace, c.Name, s.probeErr.Reason)
	}
}

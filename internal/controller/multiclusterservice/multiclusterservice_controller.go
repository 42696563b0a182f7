package multiclusterservice

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/alerting"
	"holdfast.dev/holdfast/internal/controller/index"
	"holdfast.dev/holdfast/internal/controller/interrupt"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/notify"
	"holdfast.dev/holdfast/internal/rollout"
	"holdfast.dev/holdfast/internal/tenancy"
)

// Reconciler keeps the ClusterServiceStatuses of a MultiClusterService in line with the
// Clusters its selector matches.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Tenancy limits which Clusters a service set may select (package tenancy).
	Tenancy tenancy.Policy
	// Clock times the rollout's pauses; the real clock when nil.
	Clock clock.PassiveClock
	// Notifier sends RolloutHalted to the service set's notification targets, whose Secrets
	// APIReader reads; none are sent when nil.
	Notifier  *notify.Dispatcher
	APIReader client.Reader
	// Alerts, if set, sends RolloutHalted and RolloutComplete to the AlertRules that select
	// the service set.
	Alerts *alerting.Router
}

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

// +kubebuilder:rbac:groups=holdfast.dev,resources=multiclusterservices,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=holdfast.dev,resources=multiclusterservices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=holdfast.dev,resources=multiclusterservices/finalizers,verbs=update
// +kubebuilder:rbac:groups=holdfast.dev,resources=clusterservicestatuses,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=holdfast.dev,resources=holdfastclusters,verbs=get;list;watch

// scope is what one reconcile learned; the deferred status patch computes everything from it.
type scope struct {
	mcs      *holdfastv1.MultiClusterService
	before   *holdfastv1.MultiClusterService
	matching []holdfastv1.Cluster
	// membership is how the service set selects each matching cluster, by key (Selection).
	membership map[string]rollout.Membership
	statuses   []holdfastv1.ClusterServiceStatus // of matching clusters
	invalid    error                             // the selector cannot be used
	deleting   bool
	// plan is the rollout's decision (spec.rollout), nil without one; revisionErr says why the
	// revision of the services cannot be made.
	plan        *rollout.Plan
	revisionErr error
	// commit is the Git commit the templates of revision commitRevision were rendered from
	// (sourceCommit), for the rollout's events; empty when they have no Git source.
	commit, commitRevision string
	// taken are the matching Clusters whose status object's name another service set's status
	// object has (see nameTaken).
	taken []nameTaken
}

// nameTaken is a matching Cluster whose status object cannot be made: naming.StatusName gives
// the same name to another service set on another Cluster ("a.b" on "c", "a" on "b.c").
type nameTaken struct {
	cluster, status     types.NamespacedName
	otherSet, otherOnto string
}

// takenRetry is how often a service set whose status object names are taken looks again: the
// other service set's status object going away wakes only that set.
const takenRetry = time.Minute

// Reconcile creates and deletes ClusterServiceStatuses and writes the status once, at the end.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	mcs := &holdfastv1.MultiClusterService{}
	if err := r.Client.Get(ctx, req.NamespacedName, mcs); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if mcs.Spec.Rollout != nil && r.APIReader != nil {
		// The rollout decides from its last status (a resume handled, a halt notified): read
		// what the last reconcile wrote, not a cache that may not have seen it yet.
		if err := r.APIReader.Get(ctx, req.NamespacedName, mcs); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	s := &scope{mcs: mcs, before: mcs.DeepCopy()}
	defer interrupt.Finish(ctx, &res, &retErr, func(ctx context.Context) error { return r.patchStatus(ctx, s) })

	if !mcs.DeletionTimestamp.IsZero() {
		s.deleting = true
		return ctrl.Result{}, r.reconcileDelete(ctx, s)
	}
	if controllerutil.AddFinalizer(mcs, holdfastv1.CleanupFinalizer) {
		if err := r.Client.Update(ctx, mcs); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding the finalizer to MultiClusterService %s: %w", mcs.Name, err)
		}
		s.before.ResourceVersion = mcs.ResourceVersion
		s.before.Finalizers = mcs.Finalizers
	}
	if err := r.reconcileClusters(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if s.plan != nil {
		// Only a pause between waves is moved by time; the status objects' changes move the rest.
		res.RequeueAfter = s.plan.Requeue
	}
	if len(s.taken) > 0 && (res.RequeueAfter == 0 || res.RequeueAfter > takenRetry) {
		res.RequeueAfter = takenRetry
	}
	return res, nil
}

// reconcileClusters creates a ClusterServiceStatus for each matching Cluster and deletes those of
// Clusters that no longer match.
func (r *Reconciler) reconcileClusters(ctx context.Context, s *scope) error {
	selection, err := rollout.NewSelection(r.Tenancy, s.mcs)
	if err != nil {
		s.invalid = err
		return nil
	}
	// Read only: the cache's own objects, not copies (the fleet's every Cluster, on each reconcile).
	clusters := &holdfastv1.ClusterList{}
	if err := r.Client.List(ctx, clusters, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("listing Clusters: %w", err)
	}
	s.membership = map[string]rollout.Membership{}
	for i := range clusters.Items {
		c := &clusters.Items[i]
		if m := selection.Of(c); m != rollout.NotSelected {
			s.matching = append(s.matching, *c)
			s.membership[c.Namespace+"/"+c.Name] = m
		}
	}

	existing, err := index.StatusesOfServiceSet(ctx, r.Client, s.mcs.Name)
	if err != nil {
		return err
	}
	byCluster := make(map[string]*holdfastv1.ClusterServiceStatus, len(existing))
	for i := range existing {
		byCluster[existing[i].Namespace+"/"+existing[i].Spec.Cluster] = &existing[i]
	}

	if s.mcs.Spec.Rollout != nil {
		if err := r.planRollout(ctx, s, byCluster); err != nil {
			return err
		}
		if s.revisionErr != nil {
			// Nothing changes until the revision can be made; the clusters keep theirs.
			return nil
		}
		// The plan keeps the clusters the selector in force selects (Selection).
		s.matching = slices.DeleteFunc(s.matching, func(c holdfastv1.Cluster) bool {
			_, kept := s.plan.Assign[c.Namespace+"/"+c.Name]
			return !kept
		})
	}

	errs := r.setRevisions(ctx, s, byCluster)
	wanted := map[string]bool{}
	for i := range s.matching {
		c := &s.matching[i]
		key := c.Namespace + "/" + c.Name
		wanted[key] = true
		if css, ok := byCluster[key]; ok {
			if css.DeletionTimestamp.IsZero() {
				s.statuses = append(s.statuses, *css)
			}
			continue
		}
		css, err := r.createStatus(ctx, s.mcs, c, s.revisionFor(key), s.heldFor(key))
		if apierrors.IsAlreadyExists(err) {
			css, err = r.statusNamed(ctx, s, c)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if css != nil {
			s.statuses = append(s.statuses, *css)
		}
	}
	policy := holdfastv1.DeletionDelete
	if s.mcs.Spec.UnmatchPolicy == holdfastv1.UnmatchLeave {
		policy = holdfastv1.DeletionOrphan
	}
	for key, css := range byCluster {
		if wanted[key] {
			continue
		}
		if err := r.deleteStatus(ctx, css, policy); err != nil {
			errs = append(errs, err)
		}
	}
	return kerrors.NewAggregate(errs)
}

func (r *Reconciler) createStatus(ctx context.Context, mcs *holdfastv1.MultiClusterService, c *holdfastv1.Cluster, revision string, held bool) (*holdfastv1.ClusterServiceStatus, error) {
	css := &holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{
			Name:      naming.StatusName(mcs.Name, c.Name),
			Namespace: c.Namespace,
			Labels: map[string]string{
				holdfastv1.MultiClusterServiceLabel: naming.LabelValue(mcs.Name),
				holdfastv1.ClusterLabel:             naming.LabelValue(c.Name),
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: holdfastv1.GroupVersion.String(), Kind: "MultiClusterService",
				Name: mcs.Name, UID: mcs.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
			// Born with the finalizer its controller needs before it deploys anything: adding it
			// there would be a read of the whole object and an update more per cluster.
			Finalizers: []string{holdfastv1.CleanupFinalizer},
		},
		Spec: holdfastv1.ClusterServiceStatusSpec{
			MultiClusterService: mcs.Name,
			Cluster:             c.Name,
			CleanupPolicy:       holdfastv1.DeletionDelete,
			Revision:            revision,
			Held:                held,
		},
	}
	if err := r.Client.Create(ctx, css); err != nil {
		return nil, fmt.Errorf("creating ClusterServiceStatus %s: %w", klog.KObj(css), err)
	}
	ctrl.LoggerFrom(ctx).Info("Cluster selected", "cluster", klog.KObj(c), "clusterServiceStatus", klog.KObj(css))
	return css, nil
}

// statusNamed reads the status object whose name Cluster c's already has: its own, which the
// cache had not shown yet, or another service set's, whose name is the same (recorded in
// s.taken, and nil returned).
func (r *Reconciler) statusNamed(ctx context.Context, s *scope, c *holdfastv1.Cluster) (*holdfastv1.ClusterServiceStatus, error) {
	key := types.NamespacedName{Namespace: c.Namespace, Name: naming.StatusName(s.mcs.Name, c.Name)}
	css := &holdfastv1.ClusterServiceStatus{}
	if err := r.Client.Get(ctx, key, css); err != nil {
		return nil, fmt.Errorf("reading ClusterServiceStatus %s, which exists already: %w", key, err)
	}
	if css.Spec.MultiClusterService == s.mcs.Name && css.Spec.Cluster == c.Name {
		return css, nil
	}
	s.taken = append(s.taken, nameTaken{cluster: client.ObjectKeyFromObject(c), status: key,
		otherSet: css.Spec.MultiClusterService, otherOnto: css.Spec.Cluster})
	ctrl.LoggerFrom(ctx).Info("Status object name taken by another service set", "cluster", klog.KObj(c),
		"clusterServiceStatus", klog.KObj(css), "otherMultiClusterService", css.Spec.MultiClusterService)
	return nil, nil
}

// deleteStatus sets the cleanup policy the deletion should follow, then deletes; the
// ClusterServiceStatus controller withdraws or orphans the services before letting it go.
func (r *Reconciler) deleteStatus(ctx context.Context, listed *holdfastv1.ClusterServiceStatus, policy holdfastv1.DeletionPolicy) error {
	css := listed.DeepCopy() // listed is the cache's own (index.StatusesOfServiceSet)
	if css.Spec.CleanupPolicy != policy && css.DeletionTimestamp.IsZero() {
		before := css.DeepCopy()
		css.Spec.CleanupPolicy = policy
		if err := r.Client.Patch(ctx, css, client.MergeFrom(before)); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("setting the cleanup policy of ClusterServiceStatus %s: %w", klog.KObj(css), err)
		}
	}
	if !css.DeletionTimestamp.IsZero() {
		return nil
	}
	if err := r.Client.Delete(ctx, css); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting ClusterServiceStatus %s: %w", klog.KObj(css), err)
	}
	ctrl.LoggerFrom(ctx).Info("Cluster no longer selected", "clusterServiceStatus", klog.KObj(css), "cleanupPolicy", policy)
	return nil
}

// reconcileDelete deletes every ClusterServiceStatus with the deletion policy and removes the
// finalizer once they are all gone, so nothing deployed outlives its declaration unnoticed.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) error {
	existing, err := index.StatusesOfServiceSet(ctx, r.Client, s.mcs.Name)
	if err != nil {
		return err
	}
	policy := s.mcs.Spec.DeletionPolicy
	if policy == "" {
		policy = holdfastv1.DeletionDelete
	}
	var errs []error
	for i := range existing {
		if err := r.deleteStatus(ctx, &existing[i], policy); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 || len(existing) > 0 {
		// The ClusterServiceStatuses' deletion events bring us back.
		s.statuses = existing
		return kerrors.NewAggregate(errs)
	}
	if controllerutil.RemoveFinalizer(s.mcs, holdfastv1.CleanupFinalizer) {
		if err := r.Client.Update(ctx, s.mcs); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing the finalizer of MultiClusterService %s: %w", s.mcs.Name, err)
		}
	}
	return nil
}

// patchStatus computes the status from the scope and patches it once.
func (r *Reconciler) patchStatus(ctx context.Context, s *scope) error {
	if s.deleting && len(s.statuses) == 0 {
		metrics.DeleteRollout(s.mcs.Name)
		metrics.DeleteDriftsByUser(s.mcs.Name)
		return nil // gone, or about to be
	}
	computeStatus(s)
	r.recordTransition(ctx, s)
	reportRollout(s)
	if equality.Semantic.DeepEqual(s.before.Status, s.mcs.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, s.mcs, client.MergeFrom(s.before)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("patching the status of MultiClusterService %s: %w", s.mcs.Name, err)
	}
	// Once the halt is recorded: the next reconcile reads it and does not notify again.
	r.notifyRollout(ctx, s)
	return nil
}

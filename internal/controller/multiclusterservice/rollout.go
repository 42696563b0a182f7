package multiclusterservice

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/notify"
	"holdfast.dev/holdfast/internal/rollout"
)

// defaultRevisionHistory is how many revisions are kept beyond those in use when
// spec.rollout.revisionHistoryLimit is not set.
const defaultRevisionHistory = 10

// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=holdfast.dev,resources=servicetemplates,verbs=get;list;watch

// planRollout snapshots the services as declared into a revision, makes sure every namespace
// of a matching cluster holds it, and decides which revision each cluster deploys (package
// rollout). The plan is kept in the scope; the status objects are given their revisions as they
// are created or patched (reconcileClusters). A revision that cannot be made is a problem in
// the status, and nothing changes.
func (r *Reconciler) planRollout(ctx context.Context, s *scope, existing map[string]*holdfastv1.ClusterServiceStatus) error {
	snap, templates, err := r.snapshot(ctx, s.mcs)
	if err != nil {
		s.revisionErr = err
		return nil
	}
	data, name, err := snap.Encode(s.mcs.Name)
	if err != nil {
		s.revisionErr = err
		return nil
	}
	s.commit, s.commitRevision = sourceCommit(s.mcs, templates), name
	namespaces := map[string]bool{}
	clusters := make([]rollout.Cluster, 0, len(s.matching))
	for i := range s.matching {
		c := &s.matching[i]
		key := c.Namespace + "/" + c.Name
		namespaces[c.Namespace] = true
		clusters = append(clusters, rollout.Cluster{Key: key, Labels: c.Labels, Status: existing[key], Membership: s.membership[key]})
	}
	for ns := range namespaces {
		if err := r.ensureRevision(ctx, s.mcs, ns, name, data); err != nil {
			s.revisionErr = err
			return nil
		}
	}
	plan, err := rollout.Make(rollout.Input{
		Strategy: *s.mcs.Spec.Rollout, Previous: s.mcs.Status.Rollout, Revision: name, Selector: s.mcs.Spec.ClusterSelector, Clusters: clusters,
		Resume: s.mcs.Annotations[holdfastv1.RolloutResumeAnnotation], Abort: s.mcs.Annotations[holdfastv1.RolloutAbortAnnotation],
		Approval: r.approval(ctx, s.mcs), Now: r.now(),
	})
	if err != nil {
		s.revisionErr = err
		return nil
	}
	s.plan = &plan
	return r.pruneRevisions(ctx, s, namespaces, existing)
}

// snapshot reads the templates the services use and snapshots them with the services; it
// returns the templates too, by namespace/name.
func (r *Reconciler) snapshot(ctx context.Context, mcs *holdfastv1.MultiClusterService) (*rollout.Snapshot, map[string]*holdfastv1.ServiceTemplate, error) {
	templates := map[string]*holdfastv1.ServiceTemplate{}
	for _, svc := range mcs.Spec.Services {
		key := types.NamespacedName{Namespace: svc.Template.Namespace, Name: svc.Template.Name}
		if _, ok := templates[key.String()]; ok {
			continue
		}
		tpl := &holdfastv1.ServiceTemplate{}
		if err := r.Client.Get(ctx, key, tpl); err != nil {
			if !apierrors.IsNotFound(err) {
				return nil, nil, fmt.Errorf("reading ServiceTemplate %s: %w", key, err)
			}
			continue // NewSnapshot names the service
		}
		templates[key.String()] = tpl
	}
	snap, err := rollout.NewSnapshot(mcs.Spec.Services, mcs.Spec.ClusterSelector, templates)
	return snap, templates, err
}

// sourceCommit is the Git commit the service set's templates were rendered from: that of the
// first service, in spec order, whose template has a Flux GitRepository artifact with a commit
// in its revision; "" when none has. Services whose templates name other commits are not
// reported: a commit status is about one commit.
func sourceCommit(mcs *holdfastv1.MultiClusterService, templates map[string]*holdfastv1.ServiceTemplate) string {
	for _, svc := range mcs.Spec.Services {
		tpl := templates[svc.Template.Namespace+"/"+svc.Template.Name]
		if tpl == nil || tpl.Spec.Artifact == nil || tpl.Spec.Artifact.SourceRef == nil ||
			tpl.Spec.Artifact.SourceRef.Kind != "GitRepository" || tpl.Status.Artifact == nil {
			continue
		}
		if commit := notify.CommitOf(tpl.Status.Artifact.Revision); commit != "" {
			return commit
		}
	}
	return ""
}

// ensureRevision creates the ControllerRevision name in namespace unless it is there as made
// for mcs. One there that rollout.Verify refuses (changed by someone who may write
// ControllerRevisions in namespace, or left by an earlier service set of the same name) is
// replaced: its name stands for exactly data, so the replacement is the revision itself.
func (r *Reconciler) ensureRevision(ctx context.Context, mcs *holdfastv1.MultiClusterService, namespace, name string, data []byte) error {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	existing := &appsv1.ControllerRevision{}
	if err := r.Client.Get(ctx, key, existing); err == nil {
		if rollout.Holds(existing, mcs, data) {
			return nil
		}
		_, refused := rollout.Verify(existing, mcs)
		if refused == nil {
			return nil
		}
		ctrl.LoggerFrom(ctx).Info("Revision not as made; replacing it", "revision", klog.KObj(existing), "reason", refused.Error())
		if err := r.Client.Delete(ctx, existing, client.Preconditions{UID: &existing.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("replacing revision %s, which is not as Holdfast made it: %w", key, err)
		}
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading revision %s: %w", key, err)
	}
	revisions, err := r.revisions(ctx, mcs.Name, namespace)
	if err != nil {
		return err
	}
	number := int64(1)
	for _, cr := range revisions {
		if cr.Revision < math.MaxInt64 { // one labelled by someone else must not overflow the count
			number = max(number, cr.Revision+1)
		}
	}
	cr := rollout.NewControllerRevision(mcs, namespace, name, data, number)
	if err := r.Client.Create(ctx, cr); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating revision %s of MultiClusterService %s (%d bytes): %w", key, mcs.Name, len(data), err)
	}
	ctrl.LoggerFrom(ctx).Info("Revision created", "revision", klog.KObj(cr), "number", number)
	return nil
}

// revisions lists the service set's ControllerRevisions in namespace.
func (r *Reconciler) revisions(ctx context.Context, mcs, namespace string) ([]appsv1.ControllerRevision, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{holdfastv1.RevisionLabel: naming.LabelValue(mcs)}); err != nil {
		return nil, fmt.Errorf("listing the revisions of MultiClusterService %s in %s: %w", mcs, namespace, err)
	}
	return list.Items, nil
}

// pruneRevisions deletes the service set's revisions beyond spec.rollout.revisionHistoryLimit,
// oldest first, never one a status object deploys or was given, nor the rollout's own.
func (r *Reconciler) pruneRevisions(ctx context.Context, s *scope, namespaces map[string]bool, existing map[string]*holdfastv1.ClusterServiceStatus) error {
	limit := defaultRevisionHistory
	if l := s.mcs.Spec.Rollout.RevisionHistoryLimit; l != nil {
		limit = int(*l)
	}
	inUse := map[string]bool{s.plan.Status.Revision: true, s.plan.Status.StableRevision: true}
	for _, css := range existing {
		inUse[css.Spec.Revision], inUse[css.Status.Revision] = true, true
	}
	for _, rev := range s.plan.Assign {
		inUse[rev] = true
	}
	for ns := range namespaces {
		revisions, err := r.revisions(ctx, s.mcs.Name, ns)
		if err != nil {
			return err
		}
		sort.Slice(revisions, func(i, j int) bool { return revisions[i].Revision > revisions[j].Revision })
		kept := 0
		for i := range revisions {
			cr := &revisions[i]
			if inUse[cr.Name] {
				continue
			}
			if kept++; kept <= limit {
				continue
			}
			if err := r.Client.Delete(ctx, cr); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting revision %s: %w", klog.KObj(cr), err)
			}
		}
	}
	return nil
}

// revisionFor is the revision the status object of cluster key should name: the plan's, or
// none when the service set has no rollout.
func (s *scope) revisionFor(key string) string {
	if s.plan == nil {
		return ""
	}
	return s.plan.Assign[key]
}

// heldFor reports whether the status object of cluster key is held: the plan gives it no
// revision (spec.held).
func (s *scope) heldFor(key string) bool {
	return s.plan != nil && s.plan.Assign[key] == ""
}

// revisionWriters is how many status objects setRevisions patches at once: a wave of hundreds
// of clusters takes its revision in the time of a few patches, not of one after the other.
const revisionWriters = 16

// setRevisions gives the existing status objects of the matching clusters the revisions the
// plan assigns them (none without a rollout), revisionWriters at a time; it returns what failed.
// The listed objects are the cache's own and stay as they are: the status computed from them
// reads their conditions, and their watch events bring the new revision.
func (r *Reconciler) setRevisions(ctx context.Context, s *scope, existing map[string]*holdfastv1.ClusterServiceStatus) []error {
	var (
		mu   sync.Mutex
		errs []error
		g    errgroup.Group
	)
	g.SetLimit(revisionWriters)
	for i := range s.matching {
		key := s.matching[i].Namespace + "/" + s.matching[i].Name
		listed, ok := existing[key]
		revision, held := s.revisionFor(key), s.heldFor(key)
		if !ok || !listed.DeletionTimestamp.IsZero() || (listed.Spec.Revision == revision && listed.Spec.Held == held) {
			continue
		}
		g.Go(func() error {
			css := listed.DeepCopy() // listed is the cache's own (index.StatusesOfServiceSet)
			before := css.DeepCopy()
			css.Spec.Revision, css.Spec.Held = revision, held
			if err := r.Client.Patch(ctx, css, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("giving ClusterServiceStatus %s its revision %s: %w", klog.KObj(css), revision, err))
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait() // every function returns nil; errs holds what failed
	return errs
}

// notifyRollout sends what became of the service set's rollout in this reconcile: RolloutHalted
// to its notification targets and to the AlertRules that select it, RolloutComplete to those
// rules. It never blocks: sends are queued.
func (r *Reconciler) notifyRollout(ctx context.Context, s *scope) {
	e, ok := r.rolloutEvent(s)
	if !ok {
		return
	}
	r.Alerts.Route(ctx, s.mcs, []notify.Event{e})
	if e.Type != notify.RolloutHalted || r.Notifier == nil || r.APIReader == nil || len(s.mcs.Spec.Notifications) == 0 {
		return
	}
	log := ctrl.LoggerFrom(ctx)
	targets, invalid := notify.Targets(ctx, r.APIReader, s.mcs, func(target, namespace string) error {
		return r.Tenancy.Secret(s.mcs, target, namespace)
	})
	for _, it := range invalid {
		log.Info("Notification target not usable; skipped", "target", it.Name, "error", it.Err.Error())
	}
	for _, t := range targets {
		if !r.Notifier.Send(t, e) {
			log.Info("Notification queue full; event dropped", "target", t.Name, "event", e.Type)
		}
	}
}

// rolloutEvent is the event of the rollout's phase entered in this reconcile: RolloutProgressing
// when a revision started rolling out (a new one, or one resumed), RolloutHalted when it halted,
// RolloutComplete when it completed; false when none happened now. Commit is the Git commit
// of the revision's templates, when known.
func (r *Reconciler) rolloutEvent(s *scope) (notify.Event, bool) {
	before, after := s.before.Status.Rollout, s.mcs.Status.Rollout
	if after == nil || (before != nil && before.Phase == after.Phase && before.Revision == after.Revision) {
		return notify.Event{}, false
	}
	e := notify.Event{Time: r.now(), MultiClusterService: s.mcs.Name,
		Rollout: &notify.RolloutDetail{Revision: after.Revision, StableRevision: after.StableRevision}}
	switch after.Phase {
	case holdfastv1.RolloutProgressing:
		// Pausing between waves and going on to the next is the same rollout in progress.
		if before != nil && before.Revision == after.Revision && before.Phase == holdfastv1.RolloutPausing {
			return notify.Event{}, false
		}
		e.Type = notify.RolloutProgressing
	case holdfastv1.RolloutHalted:
		e.Type = notify.RolloutHalted
	case holdfastv1.RolloutComplete:
		e.Type = notify.RolloutComplete
	default:
		return notify.Event{}, false
	}
	if s.commitRevision == after.Revision {
		e.Commit = s.commit
	}
	if int(after.Wave) < len(after.Waves) {
		e.Rollout.Wave = after.Waves[after.Wave].Name
	}
	for _, f := range after.FailedClusters {
		if !f.Resumed {
			e.Rollout.Failed = append(e.Rollout.Failed, f)
		}
	}
	if ready := conditions.Get(s.mcs, holdfastv1.ReadyCondition); ready != nil {
		e.Message = ready.Message
	}
	return e, true
}

// reportRollout sets the rollout gauges of the service set from its status, or removes them
// when it has no rollout or is gone.
func reportRollout(s *scope) {
	ro := s.mcs.Status.Rollout
	if ro == nil || s.deleting {
		metrics.DeleteRollout(s.mcs.Name)
		return
	}
	wave := 0
	if ro.Phase != holdfastv1.RolloutComplete && ro.Phase != holdfastv1.RolloutAborted {
		wave = int(ro.Wave) + 1
	}
	metrics.SetRollout(s.mcs.Name, ro.Phase == holdfastv1.RolloutHalted, wave)
}

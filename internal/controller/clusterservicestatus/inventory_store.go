package clusterservicestatus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/inventory"
	"holdfast.dev/holdfast/internal/metrics"
)

// This file is where the inventory is read from and written to where it is stored: inline in
// status.resources, or, when too large for the status object, in ClusterServiceInventory shards
// (package inventory). Everything else in the package works on the whole inventory in
// s.css.Status.Resources, read by readWhole, as if it were always inline.

// +kubebuilder:rbac:groups=holdfast.dev,resources=clusterserviceinventories,verbs=get;list;create;update;delete

// inventoryRetry is how often a status object whose inventory is incomplete is looked at again:
// a person has to restore the shard (see docs/inventory.md).
const inventoryRetry = time.Minute

// errInventoryIncomplete ends a reconcile that found its inventory incomplete; Reconcile turns
// it into a wait of inventoryRetry (the condition says what to do, an error would only add
// backoff and logs).
var errInventoryIncomplete = errors.New("inventory incomplete")

func (r *Reconciler) inventory() inventory.Store {
	return inventory.Store{Client: r.Client, Reader: r.APIReader, ShardSize: r.InventoryShardSize}
}

// loadInventory puts the whole inventory of css, just read from the API server, into
// css.Status.Resources, and keeps what is needed to write it back (s.shards, s.summary). When
// a shard is missing it leaves css as read, records the problem in the scope for the status to
// say, and returns errInventoryIncomplete: nothing may be applied, pruned or withdrawn from a
// partial inventory.
func (r *Reconciler) loadInventory(ctx context.Context, s *scope, css *holdfastv1.ClusterServiceStatus) error {
	s.summary, s.shards, s.inventoryProblem = nil, nil, nil
	if css.Status.Inventory == nil {
		return nil
	}
	entries, shards, err := r.inventory().Load(ctx, css)
	var incomplete *inventory.IncompleteError
	switch {
	case errors.As(err, &incomplete):
		s.inventoryProblem = &problem{holdfastv1.InventoryIncompleteReason, fmt.Sprintf(
			"%s. Nothing is applied, pruned or withdrawn until the inventory is whole again: restore the shard "+
				"(from a backup of the hub), or accept that the objects it listed are forgotten (docs/inventory.md)",
			incomplete.Error())}
		ctrl.LoggerFrom(ctx).Info("Inventory incomplete; not deploying", "problems", incomplete.Problems)
		s.summary = css.Status.Resources
		return errInventoryIncomplete
	case err != nil:
		return err
	}
	metrics.InventoryRead(metrics.InventoryWhole)
	s.summary, s.shards = css.Status.Resources, shards
	css.Status.Resources = entries
	return nil
}

// writeStatus patches the status computed in s.css, storing its inventory where it fits: shards
// first (only those whose content changed), then the status object that names them, then, when
// the layout changed, the shards no longer named are deleted.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope) error {
	// The status as stored when read: the summary rather than the whole inventory when sharded.
	stored := *s.before
	if stored.Status.Inventory != nil {
		stored.Status.Resources = s.summary
	}
	after := *s.css
	if s.inventoryProblem != nil {
		// Only the conditions change; the inventory stays as stored.
		after.Status.Resources, after.Status.Inventory = s.summary, s.before.Status.Inventory
	} else {
		var st holdfastv1.ClusterServiceStatusStatus
		var err error
		if s.part != nil {
			st, err = r.inventory().SavePart(ctx, s.css, s.css.Status.Resources, s.part)
		} else {
			st, err = r.inventory().Save(ctx, s.css, s.css.Status.Resources, s.shards)
		}
		if err != nil {
			return err
		}
		after.Status = st
	}
	patch, err := statusPatch(&stored, &after)
	if err != nil {
		return err
	}
	// The answer is read into an object of its own: it holds the summary, not the inventory.
	answer := &holdfastv1.ClusterServiceStatus{ObjectMeta: metav1.ObjectMeta{Namespace: s.css.Namespace, Name: s.css.Name}}
	if err := r.Client.Status().Patch(ctx, answer, patch); err != nil {
		return err
	}
	s.css.ResourceVersion, s.css.Status.Inventory = answer.ResourceVersion, after.Status.Inventory
	if keep := shardNames(after.Status.Inventory); s.inventoryProblem == nil && !slices.Equal(shardNames(s.before.Status.Inventory), keep) {
		if err := r.inventory().Prune(ctx, s.css, keep); err != nil {
			// Harmless: the status object does not name them, and the next write tries again.
			ctrl.LoggerFrom(ctx).Info("Stale inventory shards not deleted yet", "error", err.Error())
		}
	}
	return nil
}

// shardNames are the names of the shards inv names, nil when inline.
func shardNames(inv *holdfastv1.InventoryShards) []string {
	if inv == nil {
		return nil
	}
	return inv.Names
}

// deleteInventory deletes the shards of a status object that goes (the owner reference lets a
// garbage collector do it, but the hub may run none).
func (r *Reconciler) deleteInventory(ctx context.Context, css *holdfastv1.ClusterServiceStatus) error {
	if err := r.inventory().Prune(ctx, css, nil); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the inventory shards of ClusterServiceStatus %s: %w", klog.KObj(css), err)
	}
	return nil
}

// inventoryOfStatus returns the whole inventory of another status object read from the API
// server, or an error when it cannot be read whole.
func (r *Reconciler) inventoryOfStatus(ctx context.Context, css *holdfastv1.ClusterServiceStatus) ([]holdfastv1.ResourceStatus, error) {
	entries, _, err := r.inventory().Load(ctx, css)
	return entries, err
}

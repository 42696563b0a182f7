package apply

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Delete withdraws every object of inventory from the cluster, as pruning does: in reverse apply
// order, only objects that still carry opts.Labels and that opts.Claim accepts. Objects that
// changed hands are reported Orphaned or Conflict and left in place. Result.Inventory holds what
// is still managed afterwards: objects whose deletion failed (or, in a dry run, all of them).
//
// Namespaces in the inventory are deleted too, with everything in them: a Namespace Holdfast
// created is Holdfast's to withdraw. Use Claim to keep one. Adopted objects (their entry says
// so, or Options.AdoptedAnnotation) are never deleted: they are left in place without Holdfast's
// labels and reported Orphaned.
func (a *Applier) Delete(ctx context.Context, inventory []InventoryEntry, opts Options) (*Result, error) {
	r := newRun(a, opts)
	objs, kept, deleted := r.prune(ctx, inventory)
	res := &Result{Objects: objs, Inventory: kept, Changed: deleted}
	if opts.DryRun {
		res.Inventory = append([]InventoryEntry(nil), inventory...)
		res.Changed = 0
	}
	logSummary(ctrl.LoggerFrom(ctx).WithValues("dryRun", opts.DryRun), res)
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("deleting %d objects: %w", len(inventory), err)
	}
	return res, nil
}

// prune deletes entries in reverse apply order: custom resources and namespaced objects before
// CRDs and Namespaces. It returns one result per entry, the entries still managed afterwards,
// and how many objects it deleted.
func (r *run) prune(ctx context.Context, entries []InventoryEntry) ([]ObjectResult, []InventoryEntry, int) {
	entries = slices.Clone(entries)
	slices.SortStableFunc(entries, func(a, b InventoryEntry) int { return compareRefs(b.Ref, a.Ref) })
	results := make([]ObjectResult, len(entries))
	keep := make([]bool, len(entries))
	wrote := make([]bool, len(entries))
	tier := func(i int) int {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(entries[i].GroupVersionKind())
		return -(stageOf(u)*1000 + kindTier[entries[i].Kind])
	}
	r.forEachTier(ctx, len(entries), tier, func(ctx context.Context, i int) {
		results[i], keep[i], wrote[i] = r.pruneOne(ctx, entries[i])
	}, func(i int) {
		results[i] = ObjectResult{Ref: entries[i].Ref, Action: Skipped, Message: "not deleted: " + ctx.Err().Error()}
		keep[i] = true
	})
	var kept []InventoryEntry
	deleted := 0
	for i, e := range entries {
		if keep[i] {
			kept = append(kept, e)
		}
		if wrote[i] {
			deleted++
		}
	}
	return results, kept, deleted
}

// pruneOne deletes one object if it is still Holdfast's, and reports whether it stays in the
// inventory and whether it was deleted now.
func (r *run) pruneOne(ctx context.Context, e InventoryEntry) (res ObjectResult, keep, deleted bool) {
	res = ObjectResult{Ref: e.Ref}
	log := ctrl.LoggerFrom(ctx).WithValues("object", e.Ref.String())
	fail := func(err error) (ObjectResult, bool, bool) {
		res.Action, res.Err, res.Message, res.Transient = Failed, err, Message(err), IsTransient(err)
		log.Info("Object not deleted", "error", res.Message, "transient", res.Transient)
		return res, true, false
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(e.GroupVersionKind())
	err := r.a.client.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: e.Name}, live)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		res.Action, res.Message = Deleted, "already absent"
		return res, false, false
	case err != nil:
		return fail(fmt.Errorf("reading live object: %w", err))
	}
	if r.opts.Claim != nil {
		if owner, ok := r.opts.Claim(live); !ok {
			res.Action, res.ConflictWith = Conflict, owner
			res.Message = fmt.Sprintf("owned by %s: not deleted, no longer managed", owner)
			return res, false, false
		}
	}
	if missing := missingLabels(live, r.opts.Labels); missing != "" {
		res.Action = Orphaned
		res.Message = fmt.Sprintf("label %s no longer marks it as ours: left in place, no longer managed", missing)
		return res, false, false
	}
	if e.Adopted || r.markedAdopted(live) {
		res.Action = Orphaned
		if r.opts.DryRun {
			res.Message = "adopted, not created by Holdfast: would be left in place"
			return res, true, false
		}
		if err := r.release(ctx, live); client.IgnoreNotFound(err) != nil {
			return fail(fmt.Errorf("releasing adopted object: %w", err))
		}
		res.Message = "adopted, not created by Holdfast: left in place, Holdfast's labels removed"
		log.V(1).Info("Released adopted object")
		return res, false, false
	}
	if r.opts.DryRun {
		res.Action = WouldDelete
		return res, true, false
	}
	// Preconditions on the version read: if someone changed the object since (another service
	// set taking it over, say), the deletion fails and the next attempt looks again.
	uid, rv := live.GetUID(), live.GetResourceVersion()
	err = r.a.client.Delete(ctx, live, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &uid, ResourceVersion: &rv})
	switch {
	case apierrors.IsNotFound(err):
		res.Action, res.Message = Deleted, "already absent"
		return res, false, false
	case err != nil:
		return fail(err)
	}
	res.Action = Deleted
	log.V(1).Info("Deleted object")
	return res, false, true
}

// missingLabels returns the first label of want that obj lacks or holds with another value.
func missingLabels(obj *unstructured.Unstructured, want map[string]string) string {
	have := obj.GetLabels()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if v, ok := have[k]; !ok || v != want[k] {
			return k + "=" + want[k]
		}
	}
	return ""
}

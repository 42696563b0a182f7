// Writes only a drift correction needs: re-creating an object whose immutable fields changed,
// and removing list items that took the place of declared ones.

package apply

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/fieldset"
)

// recreate deletes the live object of it (whatever its uid: it may be a replacement someone
// created) and applies obj once it is gone. Dependents go with it (background propagation), as
// the API server's garbage collector decides; the wait covers finalizers such as a PVC's
// protection.
func (r *run) recreate(ctx context.Context, it *item, obj *unstructured.Unstructured) error {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(it.ref.GroupVersionKind())
	key := client.ObjectKey{Namespace: it.ref.Namespace, Name: it.ref.Name}
	if err := r.a.client.Get(ctx, key, live); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reading %s to re-create it: %w", it.ref, err)
	}
	if uid := live.GetUID(); uid != "" {
		err := r.a.client.Delete(ctx, live, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting %s to re-create it: %w", it.ref, err)
		}
		timeout := r.opts.RecreateTimeout
		if timeout <= 0 {
			timeout = DefaultRecreateTimeout
		}
		err = wait.PollUntilContextTimeout(ctx, r.a.pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
			now := &unstructured.Unstructured{}
			now.SetGroupVersionKind(it.ref.GroupVersionKind())
			err := r.a.client.Get(ctx, key, now)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return err == nil && now.GetUID() != uid, client.IgnoreNotFound(err)
		})
		if err != nil {
			return fmt.Errorf("waiting for %s to be deleted before re-creating it: %w", it.ref, err)
		}
	}
	return r.a.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.ForceOwnership, client.FieldOwner(fieldset.FieldManager))
}

// restoreReplaced puts back, in the live object of a drifted item, the declared list items in
// place of those someone put there by changing their keys (see drift.ReplacedItems): server-side
// apply would re-add the declared items but cannot remove items another manager owns. When the
// list cannot be put right before the apply — the API server refuses the intermediate object,
// e.g. a renamed volume is still mounted under its new name until the apply renames the mount —
// it returns the items for removal after the apply instead.
func (r *run) restoreReplaced(ctx context.Context, it *item) (after []drift.ReplacedItem, err error) {
	if !it.result.Drift || it.live == nil {
		return nil, nil
	}
	items := drift.ReplacedItems(it.obj, it.live)
	if len(items) == 0 {
		return nil, nil
	}
	err = r.patchItems(ctx, it, items, "replace")
	if apierrors.IsInvalid(err) {
		return items, nil
	}
	return nil, err
}

// patchItems replaces the items with the declared ones (op "replace") or removes them ("remove")
// in one JSON patch, each change preceded by a test that the item is still as read, so nothing
// changed since is overwritten.
func (r *run) patchItems(ctx context.Context, it *item, items []drift.ReplacedItem, verb string) error {
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value,omitempty"`
	}
	var ops []op
	var paths []string
	for _, ri := range items {
		ops = append(ops, op{Op: "test", Path: ri.Pointer, Value: ri.Item})
		if verb == "replace" {
			ops = append(ops, op{Op: "replace", Path: ri.Pointer, Value: ri.Declared})
		} else {
			ops = append(ops, op{Op: "remove", Path: ri.Pointer})
		}
		paths = append(paths, ri.Path)
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return fmt.Errorf("correcting list items whose keys were changed in %s: %w", it.ref, err)
	}
	ctrl.LoggerFrom(ctx).Info("Correcting list items whose keys were changed", "object", it.ref.String(), "items", paths, "op", verb)
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(it.ref.GroupVersionKind())
	target.SetNamespace(it.ref.Namespace)
	target.SetName(it.ref.Name)
	if err := r.a.client.Patch(ctx, target, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(fieldset.FieldManager)); err != nil {
		return fmt.Errorf("correcting list items %v whose keys were changed (%s): %w", paths, verb, err)
	}
	return nil
}

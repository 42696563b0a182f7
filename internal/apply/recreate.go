package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

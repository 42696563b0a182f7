// Adoption: what Apply does with a declared object that already exists on the cluster but that
// Holdfast did not create, and how an adopted object is let go instead of deleted.

package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/fieldset"
)

// foreign reports whether the live object of it exists and was not created by Holdfast, as
// Options.Foreign judges it. Only objects Holdfast never applied are judged: those in
// Options.Previous, and corrections, were applied before.
func (r *run) foreign(it *item) bool {
	if r.opts.Foreign == nil || r.opts.Corrections || it.live == nil || r.inPrevious(it) {
		return false
	}
	return r.opts.Foreign(it.live)
}

// inPrevious reports whether Options.Previous holds it: Holdfast applied it before.
func (r *run) inPrevious(it *item) bool {
	_, ok := r.prev[it.ref.key()]
	return ok
}

// foreignMessage says why a foreign object was left untouched, naming (a few of) the field
// managers that wrote it, so that whoever reads the status knows whose it is.
func foreignMessage(live *unstructured.Unstructured) string {
	msg := "exists on the cluster and Holdfast did not create it: left untouched"
	if m := managers(live, 3); len(m) > 0 {
		msg += " (written by " + strings.Join(m, ", ") + ")"
	}
	return msg
}

// maxManagerName bounds a field manager's name quoted in a message: it comes from the target.
const maxManagerName = 64

// managers returns up to n distinct field managers of live other than Holdfast's, in the order
// the API server records them.
func managers(live *unstructured.Unstructured, n int) []string {
	var out []string
	for _, e := range live.GetManagedFields() {
		name := e.Manager
		if len(name) > maxManagerName {
			name = name[:maxManagerName] + "..."
		}
		if name == "" || e.Manager == fieldset.FieldManager || e.Manager == adoptionManager || slices.Contains(out, name) {
			continue
		}
		if len(out) == n {
			return append(out, "...")
		}
		out = append(out, name)
	}
	return out
}

// adoptionManager is the field manager of Options.AdoptedAnnotation: not Holdfast's applied
// configuration, so that applies (corrections included) neither remove it nor count it.
const adoptionManager = "holdfast-adoption"

// markAdopted sets Options.AdoptedAnnotation on the object of an adopted item, current as the
// API server last returned it, unless it carries it already. A failure is only logged: the
// inventory entry is what keeps the object from being deleted; the next apply tries again.
func (r *run) markAdopted(ctx context.Context, it *item, current *unstructured.Unstructured) {
	mark := r.opts.AdoptedAnnotation
	if mark == "" || r.opts.DryRun || it.entry == nil || !it.entry.Adopted || current == nil || r.markedAdopted(current) {
		return
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{mark: "true"}}})
	if err == nil {
		target := &unstructured.Unstructured{}
		target.SetGroupVersionKind(it.ref.GroupVersionKind())
		target.SetNamespace(it.ref.Namespace)
		target.SetName(it.ref.Name)
		err = r.a.client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(adoptionManager))
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("Cannot mark the adopted object; trying again at the next apply", "object", it.ref.String(), "error", Message(err))
	}
}

// markedAdopted reports whether live carries Options.AdoptedAnnotation: whatever an inventory
// entry says, such an object is let go, never deleted.
func (r *run) markedAdopted(live *unstructured.Unstructured) bool {
	return r.opts.AdoptedAnnotation != "" && live.GetAnnotations()[r.opts.AdoptedAnnotation] == "true"
}

// release lets go of an adopted object instead of deleting it: it stays in the cluster, and
// Options.Labels, the keys of Options.Annotations and Options.AdoptedAnnotation are removed from
// it, so that it reads as not Holdfast's again (watches no longer select it; declaring it again
// needs adoption again). The values Holdfast applied stay as they are. The patch carries the
// resourceVersion read, so a change made since fails it and the next attempt looks again.
func (r *run) release(ctx context.Context, live *unstructured.Unstructured) error {
	metadata := map[string]any{"resourceVersion": live.GetResourceVersion()}
	if drop := present(live.GetLabels(), r.opts.Labels); len(drop) > 0 {
		metadata["labels"] = drop
	}
	marks := maps.Clone(r.opts.Annotations)
	if r.opts.AdoptedAnnotation != "" {
		if marks == nil {
			marks = map[string]string{}
		}
		marks[r.opts.AdoptedAnnotation] = ""
	}
	if drop := present(live.GetAnnotations(), marks); len(drop) > 0 {
		metadata["annotations"] = drop
	}
	if len(metadata) == 1 {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return fmt.Errorf("removing Holdfast's labels: %w", err)
	}
	return r.a.client.Patch(ctx, live, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(fieldset.FieldManager))
}

// present returns, as a merge patch that removes them, the keys of want that have is set.
func present(have, want map[string]string) map[string]any {
	out := map[string]any{}
	for k := range want {
		if _, ok := have[k]; ok {
			out[k] = nil
		}
	}
	return out
}

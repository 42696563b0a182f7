package apply

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Stages, as in ssa.ResourceManager.ApplyAllStaged: definitions (CRDs, Namespaces,
// ClusterRoles), then class kinds (StorageClass, IngressClass, ...), then everything else.
const (
	stageDefinitions = iota
	stageClasses
	stageResources
	numStages
)

func stageOf(obj *unstructured.Unstructured) int {
	switch {
	case utils.IsClusterDefinition(obj):
		return stageDefinitions
	case utils.IsClassDefinition(obj):
		return stageClasses
	default:
		return stageResources
	}
}

// kindTier is ssa.ReconcileOrder as a rank: kinds listed first get negative ranks in order,
// kinds listed last (webhook configurations) positive ones, every other kind 0. Objects of one
// rank are applied concurrently; ranks one after another.
var kindTier = func() map[string]int {
	m := map[string]int{}
	for i, k := range ssa.ReconcileOrder.First {
		m[k] = i - len(ssa.ReconcileOrder.First)
	}
	for i, k := range ssa.ReconcileOrder.Last {
		m[k] = i + 1
	}
	return m
}()

func tierOf(obj *unstructured.Unstructured) int { return kindTier[obj.GetKind()] }

// compareRefs orders objects for applying: by stage, kind rank, group, kind, namespace, name.
func compareRefs(a, b Ref) int {
	ua, ub := &unstructured.Unstructured{}, &unstructured.Unstructured{}
	ua.SetGroupVersionKind(a.GroupVersionKind())
	ub.SetGroupVersionKind(b.GroupVersionKind())
	return cmp.Or(
		cmp.Compare(stageOf(ua), stageOf(ub)),
		cmp.Compare(kindTier[a.Kind], kindTier[b.Kind]),
		cmp.Compare(a.Group, b.Group),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name),
	)
}

func sortItems(items []*item) {
	slices.SortStableFunc(items, func(a, b *item) int { return compareRefs(a.ref, b.ref) })
}

// waitForCRDs waits until every CRD of items that is applied is Established, with ssa's
// WaitForSetWithContext, so that the custom resources of the next stage resolve. CRDs that do
// not become Established in time fail with ErrNotEstablished but stay applied.
func (r *run) waitForCRDs(ctx context.Context, items []*item) {
	var pending []*item
	var set object.ObjMetadataSet
	changed := false
	for _, it := range items {
		if utils.IsCRD(it.obj) && (it.result.Action == Created || it.result.Action == Configured) {
			changed = true
		}
		if it.current == nil || !utils.IsCRD(it.current) || established(it.current) {
			continue
		}
		pending = append(pending, it)
		set = append(set, object.UnstructuredToObjMetadata(it.current))
	}
	if len(pending) > 0 {
		log := ctrl.LoggerFrom(ctx)
		log.V(1).Info("Waiting for CustomResourceDefinitions to be established", "count", len(pending))
		err := r.a.waiter.WaitForSetWithContext(ctx, set, ssa.WaitOptions{
			Interval: r.a.pollInterval, Timeout: r.opts.CRDWaitTimeout, FailFast: true,
		})
		if err != nil {
			for _, it := range pending {
				it.fail(fmt.Errorf("%w within %s: %w", ErrNotEstablished, r.opts.CRDWaitTimeout, err))
				it.result.Message = "applied, but " + it.result.Message
			}
		}
	}
	// The controller-runtime mapper discovers unknown kinds lazily; a resettable one must be
	// told that CRDs changed.
	if m, ok := r.a.mapper.(meta.ResettableRESTMapper); ok && changed {
		m.Reset()
	}
}

// established reports whether a CRD has condition Established=True.
func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

package clusterservicestatus

import (
	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// CacheTransform is the hub cache's transform for ClusterServiceStatus objects: it drops
// managedFields, the inventory (status.resources) and the drift history (status.drifts).
//
// Those two lists grow with the objects a status object manages, one entry per object, and
// the controllers that read status objects from the cache need only what is left: the
// MultiClusterService controller aggregates counts and conditions, and the watch handlers map
// status objects to requests. This controller reads the whole object from the API server at
// the start of each reconcile, which it needs anyway to write with an optimistic lock, so the
// hub keeps no per-object state for a deployment (see bench/RESULTS.md, memory).
//
// A status object from the cache must therefore never be written back whole: patches computed
// between two cached copies are fine (neither holds the lists).
func CacheTransform(obj any) (any, error) {
	if css, ok := obj.(*holdfastv1.ClusterServiceStatus); ok {
		css.Status.Resources = nil
		css.Status.Drifts = nil
	}
	if accessor, err := meta.Accessor(obj); err == nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}

var _ toolscache.TransformFunc = CacheTransform

package clusterservicestatus

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// On the hub the cache holds status objects without their inventories and drift histories
// (CacheTransform): a thousand clusters' inventories would not fit, and a status patch reads the
// object whole from the API server first (readWhole). A Pull cluster's agent holds its own few
// status objects whole (Reconciler.WholeCache): it is the only writer of their status, so the
// cached copy is the one to patch unless its own last write has yet to reach the cache, and a
// status patch costs the hub one request, not two. The agent keeps what it read whole outside the
// process (StatusStore), for a restart while the hub is away to start from.

// StatusStore keeps, outside the process, the status objects as read whole: what a Pull
// cluster's agent restarted while the hub is away starts from (package agent).
type StatusStore interface {
	// KeepStatus keeps css, the whole status object as read, in place of the one kept before.
	KeepStatus(css *holdfastv1.ClusterServiceStatus)
	// ForgetStatus forgets the status object key, which is gone, and what was kept with it.
	ForgetStatus(key types.NamespacedName)
}

// readAtLeast reads the whole status object key at version atLeast or newer ("" the newest,
// from etcd): from the API server, or from the cache when it holds whole objects (WholeCache)
// and its copy is not one this process's own status writes replaced since (cachedIsCurrent).
// Writes are made with optimistic locking on the version read, so a copy older than it seemed
// costs a conflict, never a lost write.
func (r *Reconciler) readAtLeast(ctx context.Context, key types.NamespacedName, atLeast string) (*holdfastv1.ClusterServiceStatus, error) {
	css := &holdfastv1.ClusterServiceStatus{}
	if r.WholeCache && atLeast != "" {
		if err := r.Client.Get(ctx, key, css); err != nil {
			return nil, err
		}
		if cachedIsCurrent(r.memory.lastRecorded(key), css.ResourceVersion, atLeast) {
			return css, nil
		}
		css = &holdfastv1.ClusterServiceStatus{}
	}
	if err := r.APIReader.Get(ctx, key, css, &client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: atLeast}}); err != nil {
		return nil, err
	}
	return css, nil
}

// cachedIsCurrent reports whether the cached version of a status object may be read in place of
// version atLeast: it is that version, or not one this process's status writes replaced (rec,
// what it last recorded, lists those), so newer than what it wrote. The cache only moves
// forward, and held at least the version the reconcile started from.
func cachedIsCurrent(rec *recorded, cached, atLeast string) bool {
	return cached == atLeast || rec == nil || !slices.Contains(rec.replaced, cached)
}

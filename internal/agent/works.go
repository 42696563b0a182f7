package agent

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller/clusterservicestatus"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/work"
)

// Works are the works the hub published for the agent's Cluster (clusterservicestatus.Works),
// read from the Secrets of its namespace on the hub when a status object names a new one, and
// kept decoded, one per status object, so that a correction reads nothing from the hub.
type Works struct {
	// Hub reads the hub, with the agent's credentials.
	Hub client.Reader
	// Key is the agent's Cluster.
	Key types.NamespacedName

	mu   sync.Mutex
	kept map[types.NamespacedName]*work.Work
}

var _ clusterservicestatus.Works = (*Works)(nil)

// Cluster implements clusterservicestatus.Works.
func (w *Works) Cluster() types.NamespacedName { return w.Key }

// Work implements clusterservicestatus.Works: the work css names, checked against its digest
// (work.Decode) and its service set.
func (w *Works) Work(ctx context.Context, css *holdfastv1.ClusterServiceStatus) (*work.Work, error) {
	digest := css.Annotations[clusterservicestatus.WorkAnnotation]
	if digest == "" {
		return nil, clusterservicestatus.ErrNoWork
	}
	key := client.ObjectKeyFromObject(css)
	if kept := w.keptWork(key, digest); kept != nil {
		return kept, nil
	}
	list := &corev1.SecretList{}
	if err := w.Hub.List(ctx, list, client.InNamespace(css.Namespace),
		client.MatchingLabels{work.StatusLabel: naming.LabelValue(css.Name)}); err != nil {
		return nil, fmt.Errorf("listing the works of ClusterServiceStatus %s: %w", key, err)
	}
	parts := list.Items[:0]
	for _, p := range list.Items {
		if p.Type == work.SecretType && p.Annotations[work.DigestAnnotation] == digest {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: ClusterServiceStatus %s names work %s, not found", clusterservicestatus.ErrNoWork, key, digest)
	}
	data, err := work.Join(parts, digest)
	if err != nil {
		return nil, fmt.Errorf("reading the work of ClusterServiceStatus %s: %w", key, err)
	}
	decoded, err := work.Decode(data, digest)
	if err != nil {
		return nil, fmt.Errorf("reading the work of ClusterServiceStatus %s: %w", key, err)
	}
	if decoded.ServiceSet != css.Spec.MultiClusterService {
		return nil, fmt.Errorf("reading the work of ClusterServiceStatus %s: it is of service set %q, not %q", key, decoded.ServiceSet, css.Spec.MultiClusterService)
	}
	w.keep(key, &decoded)
	return &decoded, nil
}

// keptWork is the work kept for the status object key, if it is the one with digest.
func (w *Works) keptWork(key types.NamespacedName, digest string) *work.Work {
	w.mu.Lock()
	defer w.mu.Unlock()
	if kept := w.kept[key]; kept != nil && kept.Digest == digest {
		return kept
	}
	return nil
}

// keep keeps wk as the status object key's work, in place of the one before.
func (w *Works) keep(key types.NamespacedName, wk *work.Work) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.kept == nil {
		w.kept = map[types.NamespacedName]*work.Work{}
	}
	w.kept[key] = wk
}

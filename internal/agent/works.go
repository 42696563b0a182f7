package agent

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	return w.read(ctx, css, published)
}

// PreviewWork implements clusterservicestatus.Works: the work of the revision css is to preview,
// checked as Work's, and against the revision of its preview request. It is not kept: each
// revision is previewed once.
func (w *Works) PreviewWork(ctx context.Context, css *holdfastv1.ClusterServiceStatus) (*work.Work, error) {
	wk, err := w.read(ctx, css, previewed)
	if err != nil {
		return nil, err
	}
	if want := holdfastv1.RevisionOf(css.Annotations[clusterservicestatus.PreviewRequestAnnotation]); wk.Revision != want {
		return nil, fmt.Errorf("%w: the preview work of ClusterServiceStatus %s is of revision %s, not %s",
			clusterservicestatus.ErrNoWork, client.ObjectKeyFromObject(css), wk.Revision, want)
	}
	return wk, nil
}

// workNames are the annotations that name one of a status object's works: its digest and how
// many parts it is in.
type workNames struct {
	digest, parts string
	keep          bool
}

var (
	published = workNames{digest: clusterservicestatus.WorkAnnotation, parts: clusterservicestatus.WorkPartsAnnotation, keep: true}
	previewed = workNames{digest: clusterservicestatus.PreviewWorkAnnotation, parts: clusterservicestatus.PreviewWorkPartsAnnotation}
)

// read reads the work of css that names names, checked against its digest and its service set,
// and keeps it when names says so.
func (w *Works) read(ctx context.Context, css *holdfastv1.ClusterServiceStatus, names workNames) (*work.Work, error) {
	digest := css.Annotations[names.digest]
	if digest == "" {
		return nil, clusterservicestatus.ErrNoWork
	}
	key := client.ObjectKeyFromObject(css)
	if names.keep {
		if kept := w.keptWork(key, digest); kept != nil {
			return kept, nil
		}
	}
	parts, err := w.parts(ctx, css, names)
	if err != nil {
		return nil, err
	}
	// Only Secrets of the work's type and digest: a label anyone who may write Secrets there
	// can set is not enough.
	mine := slices.DeleteFunc(parts, func(p corev1.Secret) bool {
		return p.Type != work.SecretType || p.Annotations[work.DigestAnnotation] != digest
	})
	if len(mine) == 0 {
		return nil, fmt.Errorf("%w: ClusterServiceStatus %s names work %s, not found", clusterservicestatus.ErrNoWork, key, digest)
	}
	data, err := work.Join(mine, digest)
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
	if names.keep {
		w.keep(key, &decoded)
	}
	return &decoded, nil
}

// maxParts bounds the parts a status object's WorkPartsAnnotation may name: 128 parts of
// work.MaxPart are over 100 MiB, far more than a work the hub would publish.
const maxParts = 128

// partNames are the names of the parts of the work of css that which names (work.PartName), in
// order; nil when css names none or does not say how many parts it is in (a hub older than
// WorkPartsAnnotation), or more than maxParts.
func partNames(css *holdfastv1.ClusterServiceStatus, which workNames) []string {
	digest := css.Annotations[which.digest]
	n, err := strconv.Atoi(css.Annotations[which.parts])
	if digest == "" || err != nil || n <= 0 || n > maxParts {
		return nil
	}
	names := make([]string, n)
	for i := range names {
		names[i] = work.PartName(css.Name, digest, n, i)
	}
	return names
}

// parts reads the parts of the work of css that names names: each by its name when css says how
// many there are (partNames), one request per part and no list; by a list of the status object's
// works otherwise. A part not found is no work (yet): the status object names one being replaced,
// or was read before its parts.
func (w *Works) parts(ctx context.Context, css *holdfastv1.ClusterServiceStatus, which workNames) ([]corev1.Secret, error) {
	key := client.ObjectKeyFromObject(css)
	if names := partNames(css, which); names != nil {
		parts := make([]corev1.Secret, len(names))
		for i, name := range names {
			if err := w.Hub.Get(ctx, types.NamespacedName{Namespace: css.Namespace, Name: name}, &parts[i]); err != nil {
				if apierrors.IsNotFound(err) {
					return nil, nil
				}
				return nil, fmt.Errorf("reading part %d of %d of the work of ClusterServiceStatus %s: %w", i+1, len(names), key, err)
			}
		}
		return parts, nil
	}
	list := &corev1.SecretList{}
	if err := w.Hub.List(ctx, list, client.InNamespace(css.Namespace),
		client.MatchingLabels{work.StatusLabel: naming.LabelValue(css.Name)}); err != nil {
		return nil, fmt.Errorf("listing the works of ClusterServiceStatus %s: %w", key, err)
	}
	return list.Items, nil
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

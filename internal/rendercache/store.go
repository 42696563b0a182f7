package rendercache

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/render"
)

const (
	// SecretType marks the Secrets that keep renderings; a Secret of the same name and another
	// type is someone else's and is left alone.
	SecretType corev1.SecretType = "holdfast.dev/renderings"
	// RenderingsOfLabel on such a Secret holds the name of the ClusterServiceStatus whose
	// renderings it keeps (hashed when longer than a label value may be),
	// RenderingsOfNamespaceLabel its namespace and RenderingsOfUIDLabel its UID: the Secret is
	// that status object's when the UID is its.
	RenderingsOfLabel          = "holdfast.dev/renderings-of"
	RenderingsOfNamespaceLabel = "holdfast.dev/renderings-of-namespace"
	RenderingsOfUIDLabel       = "holdfast.dev/renderings-of-uid"
	// MaxSize is the most the data of one Secret may hold: the API server's limit, 1 MiB.
	MaxSize = 1 << 20
)

// ErrUnavailable is wrapped by the errors of services whose kept rendering could not be read,
// or whose new rendering could not be kept: the hub did not answer, or refused. It is worth
// retrying; applying a new rendering instead would change the values its chart generates.
var ErrUnavailable = errors.New("the kept renderings are unavailable")

// Store keeps renderings in Secrets on the hub, one per ClusterServiceStatus, all in one
// namespace: the controller's own, the only one where it may write Secrets.
type Store struct {
	// Namespace is where the Secrets are kept.
	Namespace string
	// Client creates, updates and deletes the Secrets.
	Client client.Client
	// Reader reads them from the API server: Secrets are never cached.
	Reader client.Reader
	// Charts fetches Helm charts.
	Charts render.ChartSource
}

// SecretKey is where the renderings of owner are kept: "<its namespace>.<its name>-render" in the
// store's namespace (a namespace holds no dot, so no two status objects meet).
func (s *Store) SecretKey(owner *holdfastv1.ClusterServiceStatus) types.NamespacedName {
	return types.NamespacedName{Namespace: s.Namespace, Name: naming.RenderingsName(owner.Namespace + "." + owner.Name)}
}

// legacyKey is where Holdfast kept the renderings of owner before they moved to the store's
// namespace: beside owner, owned by it (the garbage collector removes it with owner). They are
// read from there once, so that an upgrade renders no chart anew.
func legacyKey(owner *holdfastv1.ClusterServiceStatus) types.NamespacedName {
	return types.NamespacedName{Namespace: owner.Namespace, Name: naming.RenderingsName(owner.Name)}
}

// Open starts a Session for owner. It reads nothing yet: the Secret is read when a Helm service
// is first rendered, so service sets without charts cost no request.
func (s *Store) Open(owner *holdfastv1.ClusterServiceStatus) *Session {
	return &Session{store: s, owner: owner, key: s.SecretKey(owner), kept: map[string][]byte{},
		next: map[string][]byte{}, decided: map[string]bool{}, fresh: map[string]bool{}}
}

// Delete deletes the Secret keeping owner's renderings, if there is one and it is Holdfast's.
func (s *Store) Delete(ctx context.Context, owner *holdfastv1.ClusterServiceStatus) error {
	key := s.SecretKey(owner)
	secret := &corev1.Secret{}
	if err := s.Reader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading Secret %s: %w", key, err)
	}
	if secret.Type != SecretType || !ownedBy(secret, owner) {
		return nil
	}
	err := s.Client.Delete(ctx, secret, client.Preconditions{UID: &secret.UID})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting Secret %s: %w", key, err)
	}
	return nil
}

// ownedBy reports whether secret keeps owner's renderings: by its label, or, where Holdfast kept
// them before, its owner reference.
func ownedBy(secret *corev1.Secret, owner *holdfastv1.ClusterServiceStatus) bool {
	if uid := secret.Labels[RenderingsOfUIDLabel]; uid != "" {
		return uid == string(owner.UID)
	}
	for _, ref := range secret.OwnerReferences {
		if ref.UID == owner.UID {
			return true
		}
	}
	return false
}

// write makes the Secret hold data: it creates, updates or (when data is empty) deletes it.
func (s *Store) write(ctx context.Context, owner *holdfastv1.ClusterServiceStatus, existing *corev1.Secret, data map[string][]byte) error {
	key := s.SecretKey(owner)
	if len(data) == 0 {
		if existing == nil {
			return nil
		}
		err := s.Client.Delete(ctx, existing, client.Preconditions{UID: &existing.UID, ResourceVersion: &existing.ResourceVersion})
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("%w: deleting Secret %s: %w", ErrUnavailable, key, err)
		}
		return nil
	}
	secret := &corev1.Secret{}
	if existing != nil {
		secret = existing.DeepCopy()
	}
	secret.Namespace, secret.Name, secret.Type, secret.Data = key.Namespace, key.Name, SecretType, data
	if secret.Labels == nil {
		secret.Labels = map[string]string{}
	}
	secret.Labels[RenderingsOfLabel] = naming.LabelValue(owner.Name)
	secret.Labels[RenderingsOfNamespaceLabel] = owner.Namespace
	secret.Labels[RenderingsOfUIDLabel] = string(owner.UID)
	secret.Labels[holdfastv1.ClusterLabel] = naming.LabelValue(owner.Spec.Cluster)
	secret.Labels[holdfastv1.MultiClusterServiceLabel] = naming.LabelValue(owner.Spec.MultiClusterService)
	secret.OwnerReferences = nil
	if key.Namespace == owner.Namespace {
		// An owner reference cannot name another namespace's object; beside its owner, the
		// garbage collector removes the Secret with it too.
		secret.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: holdfastv1.GroupVersion.String(), Kind: "ClusterServiceStatus",
			Name: owner.Name, UID: owner.UID, Controller: ptr.To(true),
		}}
	}
	var err error
	if existing == nil {
		err = s.Client.Create(ctx, secret)
	} else {
		// The resourceVersion read makes this an optimistic update.
		err = s.Client.Update(ctx, secret)
	}
	if err != nil {
		return fmt.Errorf("%w: writing Secret %s: %w", ErrUnavailable, key, err)
	}
	return nil
}

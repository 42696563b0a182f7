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
	// renderings it keeps (hashed when longer than a label value may be).
	RenderingsOfLabel = "holdfast.dev/renderings-of"
	// MaxSize is the most the data of one Secret may hold: the API server's limit, 1 MiB.
	MaxSize = 1 << 20
)

// ErrUnavailable is wrapped by the errors of services whose kept rendering could not be read,
// or whose new rendering could not be kept: the hub did not answer, or refused. It is worth
// retrying; applying a new rendering instead would change the values its chart generates.
var ErrUnavailable = errors.New("the kept renderings are unavailable")

// Store keeps renderings in Secrets on the hub, one per ClusterServiceStatus.
type Store struct {
	// Client creates, updates and deletes the Secrets.
	Client client.Client
	// Reader reads them from the API server: Secrets are never cached.
	Reader client.Reader
	// Charts fetches Helm charts.
	Charts render.ChartSource
}

// SecretKey is where the renderings of owner are kept.
func SecretKey(owner *holdfastv1.ClusterServiceStatus) types.NamespacedName {
	return types.NamespacedName{Namespace: owner.Namespace, Name: naming.RenderingsName(owner.Name)}
}

// Open starts a Session for owner. It reads nothing yet: the Secret is read when a Helm service
// is first rendered, so service sets without charts cost no request.
func (s *Store) Open(owner *holdfastv1.ClusterServiceStatus) *Session {
	return &Session{store: s, owner: owner, key: SecretKey(owner), kept: map[string][]byte{},
		next: map[string][]byte{}, decided: map[string]bool{}, fresh: map[string]bool{}}
}

// Delete deletes the Secret keeping owner's renderings, if there is one and it is Holdfast's.
func (s *Store) Delete(ctx context.Context, owner *holdfastv1.ClusterServiceStatus) error {
	key := SecretKey(owner)
	secret := &corev1.Secret{}
	if err := s.Reader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading Secret %s: %w", key, err)
	}
	if secret.Type != SecretType {
		return nil
	}
	err := s.Client.Delete(ctx, secret, client.Preconditions{UID: &secret.UID})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting Secret %s: %w", key, err)
	}
	return nil
}

func ownedBy(secret *corev1.Secret, owner *holdfastv1.ClusterServiceStatus) bool {
	for _, ref := range secret.OwnerReferences {
		if ref.UID == owner.UID {
			return true
		}
	}
	return false
}

// write makes the Secret hold data: it creates, updates or (when data is empty) deletes it.
func (s *Store) write(ctx context.Context, owner *holdfastv1.ClusterServiceStatus, existing *corev1.Secret, data map[string][]byte) error {
	key := SecretKey(owner)
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
	secret.Labels[holdfastv1.ClusterLabel] = naming.LabelValue(owner.Spec.Cluster)
	secret.Labels[holdfastv1.MultiClusterServiceLabel] = naming.LabelValue(owner.Spec.MultiClusterService)
	secret.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: holdfastv1.GroupVersion.String(), Kind: "ClusterServiceStatus",
		Name: owner.Name, UID: owner.UID, Controller: ptr.To(true),
	}}
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

package agent

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Keys of the Secret on the agent's cluster that holds its hub kubeconfig (written by
// `holdfast cluster add --pull`) and, once it has one, its own token.
const (
	KubeconfigKey = "kubeconfig"
	tokenKey      = "token"
	issuedKey     = "issued"
	expiryKey     = "expiry"
)

// SecretStore keeps the agent's own hub token in the Secret Key on its cluster, beside the
// bootstrap kubeconfig.
type SecretStore struct {
	Client client.Client
	Key    types.NamespacedName
}

// Load returns the token kept, or an empty one.
func (s SecretStore) Load(ctx context.Context) (Stored, error) {
	secret := &corev1.Secret{}
	if err := s.Client.Get(ctx, s.Key, secret); err != nil {
		return Stored{}, fmt.Errorf("reading Secret %s on the agent's cluster: %w", s.Key, err)
	}
	issued, err1 := time.Parse(time.RFC3339, string(secret.Data[issuedKey]))
	expiry, err2 := time.Parse(time.RFC3339, string(secret.Data[expiryKey]))
	if len(secret.Data[tokenKey]) == 0 || err1 != nil || err2 != nil {
		return Stored{}, nil
	}
	return Stored{Token: string(secret.Data[tokenKey]), Issued: issued, Expiry: expiry}, nil
}

// Save keeps st.
func (s SecretStore) Save(ctx context.Context, st Stored) error {
	secret := &corev1.Secret{}
	if err := s.Client.Get(ctx, s.Key, secret); err != nil {
		return fmt.Errorf("reading Secret %s on the agent's cluster: %w", s.Key, err)
	}
	before := secret.DeepCopy()
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	secret.Data[tokenKey] = []byte(st.Token)
	secret.Data[issuedKey] = []byte(st.Issued.UTC().Format(time.RFC3339))
	secret.Data[expiryKey] = []byte(st.Expiry.UTC().Format(time.RFC3339))
	if err := s.Client.Patch(ctx, secret, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("keeping the agent's hub token in Secret %s: %w", s.Key, err)
	}
	return nil
}

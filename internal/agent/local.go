package agent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Bootstrap writes the kubeconfig an agent bootstraps with (onboard.RegisterPull's) into the
// Secret secret on the agent's own cluster (own), creating its namespace: what applying `holdfast
// cluster add --pull`'s manifests does, but for the Deployment. It is for agents run as processes
// beside the cluster: the sandbox's, the benchmarks'. An identity that may not create namespaces
// (limited to the one it is given) goes on: writing the Secret says whether the namespace is
// there.
func Bootstrap(ctx context.Context, own client.Client, secret types.NamespacedName, kubeconfig []byte) error {
	if err := own.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secret.Namespace}}); err != nil &&
		!apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		return fmt.Errorf("creating namespace %s for the agent: %w", secret.Namespace, err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secret.Namespace, Name: secret.Name},
		Data: map[string][]byte{KubeconfigKey: kubeconfig}}
	if err := own.Create(ctx, s); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("writing the agent's hub Secret %s: %w", secret, err)
		}
		// A new bootstrap: the token kept from the one before goes with it.
		data := s.Data
		if err := own.Get(ctx, secret, s); err != nil {
			return fmt.Errorf("reading the agent's hub Secret %s: %w", secret, err)
		}
		s.Data = data
		if err := own.Update(ctx, s); err != nil {
			return fmt.Errorf("writing the agent's hub Secret %s: %w", secret, err)
		}
	}
	return nil
}

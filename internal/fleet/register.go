package fleet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Registration describes a cluster to register with a hub.
type Registration struct {
	Namespace string
	Name      string
	Labels    map[string]string
	// Kubeconfig is stored in the Secret <Name>-kubeconfig under key "value", the Cluster API layout.
	Kubeconfig []byte
}

// KubeconfigSecretName is the name of the Secret Register stores a cluster's kubeconfig in.
func KubeconfigSecretName(cluster string) string { return cluster + "-kubeconfig" }

// Register creates or updates the namespace, kubeconfig Secret and Cluster for reg on the hub.
func Register(ctx context.Context, hub client.Client, reg Registration) (*holdfastv1.Cluster, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: reg.Namespace}}
	if err := hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", reg.Namespace, err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: reg.Namespace, Name: KubeconfigSecretName(reg.Name)}}
	if _, err := controllerutil.CreateOrUpdate(ctx, hub, secret, func() error {
		secret.Type = corev1.SecretTypeOpaque
		secret.Data = map[string][]byte{holdfastv1.DefaultKubeconfigKey: reg.Kubeconfig}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("writing kubeconfig Secret %s/%s: %w", reg.Namespace, secret.Name, err)
	}
	cluster := &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: reg.Namespace, Name: reg.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, hub, cluster, func() error {
		if cluster.Labels == nil {
			cluster.Labels = map[string]string{}
		}
		for k, v := range reg.Labels {
			cluster.Labels[k] = v
		}
		cluster.Spec.KubeconfigSecretRef = holdfastv1.SecretKeyReference{Name: secret.Name, Key: holdfastv1.DefaultKubeconfigKey}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("writing Cluster %s/%s: %w", reg.Namespace, reg.Name, err)
	}
	return cluster, nil
}

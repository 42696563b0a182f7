package fleet

import (
	"context"
	"fmt"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

// admissionGroupVersion, mutatingPolicies and validatingPolicies are the APIs drift attribution
// and prevention need on a target: MutatingAdmissionPolicy (stable and on by default from
// Kubernetes 1.36) and ValidatingAdmissionPolicy (stable from 1.30).
const (
	admissionGroupVersion = "admissionregistration.k8s.io/v1"
	mutatingPolicies      = "mutatingadmissionpolicies"
	validatingPolicies    = "validatingadmissionpolicies"
)

// Identity is who Holdfast is on a target cluster and what the cluster can do for attribution.
type Identity struct {
	// UserName is the connection's own user name as the API server authenticates it (a
	// SelfSubjectReview): the requests the attribution policy must not stamp.
	UserName string
	// MutatingAdmissionPolicies reports whether the cluster serves
	// admissionregistration.k8s.io/v1 mutatingadmissionpolicies.
	MutatingAdmissionPolicies bool
	// ValidatingAdmissionPolicies reports whether the cluster serves
	// admissionregistration.k8s.io/v1 validatingadmissionpolicies.
	ValidatingAdmissionPolicies bool
	// ClusterID identifies the cluster behind the connection, whatever address or credentials
	// reach it: the UID of its kube-system namespace, which lives as long as the cluster (the
	// convention of Cluster API and the multicluster ClusterProperty "cluster.clusterset.k8s.io").
	// Empty when the connection's identity may not read that namespace.
	ClusterID string
}

// identity keeps the answer for the life of the connection: a new kubeconfig is a new
// connection, and an API server upgraded in place is seen after a controller restart.
type identity struct {
	mu    sync.Mutex
	known *Identity
}

// Identity asks the cluster, once per connection, who Holdfast is there (a SelfSubjectReview,
// which any authenticated identity may create) and whether it serves MutatingAdmissionPolicy
// and ValidatingAdmissionPolicy (discovery). An error is not kept: the next call asks again.
func (c *Connection) Identity(ctx context.Context) (Identity, error) {
	c.identity.mu.Lock()
	defer c.identity.mu.Unlock()
	if c.identity.known != nil {
		return *c.identity.known, nil
	}
	authn, err := authenticationv1client.NewForConfig(c.config)
	if err != nil {
		return Identity{}, fmt.Errorf("building the authentication client of cluster %s: %w", c.key, err)
	}
	review, err := authn.SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return Identity{}, fmt.Errorf("asking cluster %s who Holdfast is there (SelfSubjectReview): %w", c.key, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(c.config)
	if err != nil {
		return Identity{}, fmt.Errorf("building the discovery client of cluster %s: %w", c.key, err)
	}
	served, err := serves(disc, admissionGroupVersion)
	if err != nil {
		return Identity{}, fmt.Errorf("reading the APIs of cluster %s: %w", c.key, err)
	}
	clusterID, err := readClusterID(ctx, c.config)
	if err != nil {
		return Identity{}, fmt.Errorf("reading the kube-system namespace of cluster %s: %w", c.key, err)
	}
	c.identity.known = &Identity{
		UserName:                    review.Status.UserInfo.Username,
		MutatingAdmissionPolicies:   served[mutatingPolicies],
		ValidatingAdmissionPolicies: served[validatingPolicies],
		ClusterID:                   clusterID,
	}
	return *c.identity.known, nil
}

// readClusterID returns the UID of the cluster's kube-system namespace (Identity.ClusterID); ""
// when the identity may not read it, or the cluster has no such namespace.
func readClusterID(ctx context.Context, cfg *rest.Config) (string, error) {
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	ns, err := core.Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsUnauthorized(err):
		return "", nil
	case err != nil:
		return "", err
	}
	return string(ns.UID), nil
}

// serves returns the resources the API server serves in groupVersion (none when it does not
// serve the group version at all).
func serves(disc discovery.DiscoveryInterface, groupVersion string) (map[string]bool, error) {
	list, err := disc.ServerResourcesForGroupVersion(groupVersion)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	served := map[string]bool{}
	for _, r := range list.APIResources {
		served[r.Name] = true
	}
	return served, nil
}

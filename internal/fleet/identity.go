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
)

// admissionGroupVersion and mutatingPolicies are the API that drift attribution needs on a target
// (MutatingAdmissionPolicy, stable and on by default from Kubernetes 1.36).
const (
	admissionGroupVersion = "admissionregistration.k8s.io/v1"
	mutatingPolicies      = "mutatingadmissionpolicies"
)

// Identity is who Holdfast is on a target cluster and what the cluster can do for attribution.
type Identity struct {
	// UserName is the connection's own user name as the API server authenticates it (a
	// SelfSubjectReview): the requests the attribution policy must not stamp.
	UserName string
	// MutatingAdmissionPolicies reports whether the cluster serves
	// admissionregistration.k8s.io/v1 mutatingadmissionpolicies.
	MutatingAdmissionPolicies bool
}

// identity keeps the answer for the life of the connection: a new kubeconfig is a new
// connection, and an API server upgraded in place is seen after a controller restart.
type identity struct {
	mu    sync.Mutex
	known *Identity
}

// Identity asks the cluster, once per connection, who Holdfast is there (a SelfSubjectReview,
// which any authenticated identity may create) and whether it serves MutatingAdmissionPolicy
// (discovery). An error is not kept: the next call asks again.
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
	supported, err := serves(disc, admissionGroupVersion, mutatingPolicies)
	if err != nil {
		return Identity{}, fmt.Errorf("reading the APIs of cluster %s: %w", c.key, err)
	}
	c.identity.known = &Identity{UserName: review.Status.UserInfo.Username, MutatingAdmissionPolicies: supported}
	return *c.identity.known, nil
}

// serves reports whether the API server serves resource in groupVersion.
func serves(disc discovery.DiscoveryInterface, groupVersion, resource string) (bool, error) {
	list, err := disc.ServerResourcesForGroupVersion(groupVersion)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return true, nil
		}
	}
	return false, nil
}

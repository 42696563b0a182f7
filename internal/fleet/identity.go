package fleet

import (
	"context"
	"fmt"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

// AdmissionPolicyAPI is an admission policy API of admissionregistration.k8s.io/v1 that drift
// attribution or prevention needs on a target, and the Kubernetes release that serves it stable
// and on by default: the one statement of it that conditions and messages quote.
type AdmissionPolicyAPI struct {
	Resource, Since string
}

// String is the API as a condition names it missing, after AdmissionGroupVersion:
// "mutatingadmissionpolicies (Kubernetes 1.36 or later)".
func (a AdmissionPolicyAPI) String() string {
	return a.Resource + " (Kubernetes " + a.Since + " or later)"
}

// AdmissionGroupVersion is the group and version of the admission policy APIs.
const AdmissionGroupVersion = "admissionregistration.k8s.io/v1"

var (
	// MutatingPolicyAPI is what drift attribution needs.
	MutatingPolicyAPI = AdmissionPolicyAPI{Resource: "mutatingadmissionpolicies", Since: "1.36"}
	// ValidatingPolicyAPI is what drift prevention needs.
	ValidatingPolicyAPI = AdmissionPolicyAPI{Resource: "validatingadmissionpolicies", Since: "1.30"}
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
	user, err := c.userName(ctx)
	if err != nil {
		return Identity{}, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(c.config)
	if err != nil {
		return Identity{}, fmt.Errorf("building the discovery client of cluster %s: %w", c.key, err)
	}
	served, err := serves(disc, AdmissionGroupVersion)
	if err != nil {
		return Identity{}, fmt.Errorf("reading the APIs of cluster %s: %w", c.key, err)
	}
	clusterID, err := readClusterID(ctx, c.config)
	if err != nil {
		return Identity{}, fmt.Errorf("reading the kube-system namespace of cluster %s: %w", c.key, err)
	}
	c.identity.known = &Identity{
		UserName:                    user,
		MutatingAdmissionPolicies:   served[MutatingPolicyAPI.Resource],
		ValidatingAdmissionPolicies: served[ValidatingPolicyAPI.Resource],
		ClusterID:                   clusterID,
	}
	return *c.identity.known, nil
}

// userName is who the connection's credentials are on the cluster: what the probe's last
// SelfSubjectReview found while it is known (probe.go), else a review of its own.
func (c *Connection) userName(ctx context.Context) (string, error) {
	if user, ok := c.reviewed.get(time.Now()); ok && user != "" {
		return user, nil
	}
	authn, err := authenticationv1client.NewForConfig(c.config)
	if err != nil {
		return "", fmt.Errorf("building the authentication client of cluster %s: %w", c.key, err)
	}
	review, err := authn.SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("asking cluster %s who Holdfast is there (SelfSubjectReview): %w", c.key, err)
	}
	return review.Status.UserInfo.Username, nil
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

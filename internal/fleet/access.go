package fleet

import (
	"context"
	"fmt"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

// accessTTL is how long a "no" of MayWatchEverywhere is kept: RBAC granted on the cluster is
// seen within that time. A "yes" is kept for the life of the connection (no request while idle);
// RBAC taken away later fails the watch, which says so in the log.
const accessTTL = 5 * time.Minute

// access keeps what the connection's identity may do, and the clients that ask.
type access struct {
	mu      sync.Mutex
	answers map[schema.GroupVersionResource]accessAnswer
	reviews authorizationv1client.SelfSubjectAccessReviewsGetter
	dyn     dynamic.Interface
}

type accessAnswer struct {
	may bool
	at  time.Time
}

// MayWatchEverywhere reports whether the connection's identity may list and watch gvr in every
// namespace (a SelfSubjectAccessReview per verb, which any authenticated identity may ask; see
// accessTTL for how long the answer is kept). An identity limited to some namespaces (a tenant's cluster, a
// namespace-scoped cluster secret) may not: its watches must be per namespace.
func (c *Connection) MayWatchEverywhere(ctx context.Context, gvr schema.GroupVersionResource) (bool, error) {
	now := time.Now()
	c.access.mu.Lock()
	if a, ok := c.access.answers[gvr]; ok && (a.may || now.Sub(a.at) < accessTTL) {
		c.access.mu.Unlock()
		return a.may, nil
	}
	c.access.mu.Unlock()
	reviews, err := c.accessReviews()
	if err != nil {
		return false, err
	}
	may := true
	for _, verb := range []string{"list", "watch"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource},
		}}
		res, err := reviews.SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return false, fmt.Errorf("asking cluster %s whether Holdfast may %s %s in every namespace: %w", c.key, verb, gvr.GroupResource(), err)
		}
		may = may && res.Status.Allowed
	}
	c.access.mu.Lock()
	defer c.access.mu.Unlock()
	if c.access.answers == nil {
		c.access.answers = map[schema.GroupVersionResource]accessAnswer{}
	}
	c.access.answers[gvr] = accessAnswer{may: may, at: now}
	return may, nil
}

// Dynamic returns a dynamic client of the cluster, as Holdfast's own identity, sharing the
// connection's transport (watches of what the cache cannot watch: package drift).
func (c *Connection) Dynamic() (dynamic.Interface, error) {
	c.access.mu.Lock()
	defer c.access.mu.Unlock()
	if c.access.dyn == nil {
		d, err := dynamic.NewForConfig(c.config)
		if err != nil {
			return nil, fmt.Errorf("building the dynamic client of cluster %s: %w", c.key, err)
		}
		c.access.dyn = d
	}
	return c.access.dyn, nil
}

// accessReviews returns the client of the cluster's authorization API (one API group's REST client,
// not a clientset).
func (c *Connection) accessReviews() (authorizationv1client.SelfSubjectAccessReviewsGetter, error) {
	c.access.mu.Lock()
	defer c.access.mu.Unlock()
	if c.access.reviews == nil {
		cl, err := authorizationv1client.NewForConfig(c.config)
		if err != nil {
			return nil, fmt.Errorf("building the client of cluster %s: %w", c.key, err)
		}
		c.access.reviews = cl
	}
	return c.access.reviews, nil
}

// Done is closed when the connection is closed: what was started for it stops then.
func (c *Connection) Done() <-chan struct{} { return c.ctxDone }

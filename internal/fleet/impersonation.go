package fleet

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MaxImpersonatingClients bounds the clients a connection keeps, one per ServiceAccount it
// impersonates: the least recently used one is let go (and built again when asked for).
const MaxImpersonatingClients = 64

// ManagedVerbs are the verbs Holdfast uses on every kind it manages on a target (package apply:
// get and list to read the live objects, create and patch to apply, delete to prune and
// withdraw); a ServiceAccount it acts as needs them on the kinds and namespaces of its service
// set, and get and create on namespaces to create a missing target namespace.
const ManagedVerbs = "get, list, create, patch and delete"

// ServiceAccount names a ServiceAccount on a target cluster.
type ServiceAccount struct {
	Namespace, Name string
}

// UserName is the ServiceAccount's user name, as the API server authenticates and authorizes it.
func (sa ServiceAccount) UserName() string {
	return "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
}

// ClientAs returns a client that makes every request as sa on the cluster (client-go's
// rest.Config.Impersonate), so that what it may do there is what sa's RBAC allows, and nothing
// more. It shares the connection's transport, rate limits, timeouts and REST mapper (discovery
// stays Holdfast's own), but not its cache: every read goes to the API server, as sa. The
// clients are kept per ServiceAccount, at most MaxImpersonatingClients per connection, and let go
// with the connection.
//
// A Forbidden error of the RBAC kind is replaced by an *ImpersonationError that names the
// ServiceAccount and says what to grant (or, when Holdfast's own identity may not impersonate
// sa, that); Kubernetes cannot impersonate twice, so a kubeconfig that impersonates already is
// refused.
func (c *Connection) ClientAs(sa ServiceAccount) (client.Client, error) {
	if sa.Namespace == "" || sa.Name == "" {
		return nil, fmt.Errorf("impersonating a ServiceAccount on cluster %s: namespace and name are both required", c.key)
	}
	if c.config.Impersonate.UserName != "" || len(c.config.Impersonate.Groups) > 0 {
		return nil, fmt.Errorf("cannot act as %s on cluster %s: its kubeconfig impersonates already (remove the user's \"as\"), and Kubernetes cannot impersonate twice", sa.UserName(), c.key)
	}
	return c.impersonating.get(sa, func() (client.Client, error) { return c.newClientAs(sa) })
}

// newClientAs builds the client of ClientAs.
func (c *Connection) newClientAs(sa ServiceAccount) (client.Client, error) {
	cfg := rest.CopyConfig(c.config)
	// The API server adds the ServiceAccount's groups (system:serviceaccounts and
	// system:serviceaccounts:<namespace>) when only a ServiceAccount user is impersonated.
	cfg.Impersonate = rest.ImpersonationConfig{UserName: sa.UserName()}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the client of %s on cluster %s: %w", sa.UserName(), c.key, err)
	}
	cl, err := client.New(cfg, client.Options{HTTPClient: httpClient, Scheme: c.cluster.GetScheme(), Mapper: c.cluster.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("building the client of %s on cluster %s: %w", sa.UserName(), c.key, err)
	}
	return &impersonatingClient{Client: cl, sa: sa}, nil
}

// clientCache keeps the impersonating clients of one connection, by ServiceAccount, at most max
// of them (k8s.io/utils/lru lets the least recently used go). Once closed it keeps none.
type clientCache struct {
	mu     sync.Mutex
	max    int
	cache  *lru.Cache
	closed bool
}

// get returns the client kept for sa, or builds one with build and keeps it.
func (c *clientCache) get(sa ServiceAccount, build func() (client.Client, error)) (client.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache != nil {
		if cl, ok := c.cache.Get(sa); ok {
			return cl.(client.Client), nil
		}
	}
	// Building makes no request: holding the lock keeps two reconciles from building the same.
	cl, err := build()
	if err != nil || c.closed {
		return cl, err
	}
	if c.cache == nil {
		limit := c.max
		if limit <= 0 {
			limit = MaxImpersonatingClients
		}
		// Nothing to close on eviction: the clients share the connection's transport.
		c.cache = lru.New(limit)
	}
	c.cache.Add(sa, cl)
	return cl, nil
}

// len is how many clients are kept.
func (c *clientCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache == nil {
		return 0
	}
	return c.cache.Len()
}

// close lets every client go and keeps none from now on.
func (c *clientCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cache, c.closed = nil, true
}

// ImpersonationError is a request refused by the cluster's authorization while impersonating a
// ServiceAccount: the ServiceAccount lacks the permission, or Holdfast's own identity may not
// impersonate it. Its Status (apierrors.APIStatus) is the API server's, Forbidden, with a
// message that says what to grant.
type ImpersonationError struct {
	// ServiceAccount is the one impersonated.
	ServiceAccount ServiceAccount
	// Impersonation is true when Holdfast's own identity was refused the impersonation itself.
	Impersonation bool
	// Verb, Resource and Namespace are what was refused ("" namespace: cluster-wide).
	Verb      string
	Resource  schema.GroupResource
	Namespace string

	status metav1.Status
	cause  error
}

func (e *ImpersonationError) Error() string { return e.status.Message }

// Status implements apierrors.APIStatus, so apierrors.IsForbidden and the API server's details
// still hold.
func (e *ImpersonationError) Status() metav1.Status { return e.status }

// Unwrap returns the API server's error.
func (e *ImpersonationError) Unwrap() error { return e.cause }

// forbiddenMessage matches the API server's message for a request its authorizer refused
// (k8s.io/apiserver responsewriters.forbiddenMessage): who, which verb, which resource and where.
var forbiddenMessage = regexp.MustCompile(`User "([^"]*)" cannot (\S+) resource "([^"]+)" in API group "([^"]*)"(?: in the namespace "([^"]*)"| at the cluster scope)`)

// explainForbidden turns an authorization refusal met while impersonating sa into an
// *ImpersonationError; every other error, Forbidden ones not about permissions (admission,
// quota, a terminating namespace) included, is returned as is.
func explainForbidden(err error, sa ServiceAccount) error {
	var status apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errors.As(err, &status) {
		return err
	}
	var already *ImpersonationError
	if errors.As(err, &already) {
		return err
	}
	m := forbiddenMessage.FindStringSubmatch(status.Status().Message)
	if m == nil {
		return err
	}
	e := &ImpersonationError{ServiceAccount: sa, Verb: m[2], Resource: schema.GroupResource{Group: m[4], Resource: m[3]}, Namespace: m[5], status: status.Status(), cause: err}
	where, grant := "cluster-wide", "a ClusterRole and ClusterRoleBinding"
	if e.Namespace != "" {
		where, grant = "in namespace "+e.Namespace, "a Role and RoleBinding"
	}
	switch {
	case m[1] == sa.UserName():
		// Granting only the verb refused would fail on the next one (a new object is read, then
		// applied; a pruned one deleted): name every verb Holdfast uses on what it manages.
		e.status.Message = fmt.Sprintf("forbidden as %s (%s %s %s): grant it %s on %s %s (%s), or change spec.serviceAccount",
			sa.UserName(), e.Verb, e.Resource, where, ManagedVerbs, e.Resource, where, grant)
	case e.Verb == "impersonate":
		e.Impersonation = true
		e.status.Message = fmt.Sprintf("Holdfast's identity on the cluster (%s) may not act as %s: grant it impersonate on serviceaccounts %s (%s), or change spec.serviceAccount",
			m[1], sa.UserName(), where, grant)
	default:
		return err
	}
	return e
}

// impersonatingClient is the client of ClientAs: every error goes through explainForbidden.
// Status and SubResource writes are not explained.
type impersonatingClient struct {
	client.Client
	sa ServiceAccount
}

func (c *impersonatingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return explainForbidden(c.Client.Get(ctx, key, obj, opts...), c.sa)
}

func (c *impersonatingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return explainForbidden(c.Client.List(ctx, list, opts...), c.sa)
}

func (c *impersonatingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return explainForbidden(c.Client.Create(ctx, obj, opts...), c.sa)
}

func (c *impersonatingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return explainForbidden(c.Client.Delete(ctx, obj, opts...), c.sa)
}

func (c *impersonatingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return explainForbidden(c.Client.Update(ctx, obj, opts...), c.sa)
}

func (c *impersonatingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return explainForbidden(c.Client.Patch(ctx, obj, patch, opts...), c.sa)
}

func (c *impersonatingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	return explainForbidden(c.Client.Apply(ctx, obj, opts...), c.sa)
}

func (c *impersonatingClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	return explainForbidden(c.Client.DeleteAllOf(ctx, obj, opts...), c.sa)
}

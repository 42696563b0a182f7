package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// Default client-side rate limits per target cluster: enough to deploy a thousand objects in
// a few seconds, well inside what an API server's priority and fairness admits from one client.
const (
	DefaultQPS   = 100
	DefaultBurst = 300
)

// Options configure a Registry.
type Options struct {
	// Scheme knows the types controllers read and write on target clusters.
	Scheme *runtime.Scheme
	// ProbeTimeout bounds one health probe. Defaults to 10s.
	ProbeTimeout time.Duration
	// ReadIdleTimeout and PingTimeout are the HTTP/2 health check of the connections to target
	// clusters: one that received nothing for ReadIdleTimeout is pinged, and closed when the
	// ping gets no answer within PingTimeout, failing the watches and requests on it. Default
	// to DefaultReadIdleTimeout and DefaultPingTimeout; a negative ReadIdleTimeout turns the
	// health check off.
	ReadIdleTimeout time.Duration
	PingTimeout     time.Duration
	// RequestTimeout bounds every request to a target cluster but watches. Defaults to
	// DefaultRequestTimeout; negative means none.
	RequestTimeout time.Duration
	// QPS and Burst limit each cluster's client. Default to DefaultQPS and DefaultBurst.
	QPS   float32
	Burst int
	// CacheSelector restricts what the per-cluster caches hold, so that a cache grows with what
	// Holdfast manages rather than with the size of the cluster. Nil caches everything watched.
	CacheSelector labels.Selector
	// WrapTransport, if set, wraps every target cluster's HTTP transport (the client, the cache
	// and the probe): benchmarks and tests use it to count the requests Holdfast makes.
	WrapTransport func(cluster types.NamespacedName, rt http.RoundTripper) http.RoundTripper
	// WrapDial, if set, wraps the function that opens every target cluster's TCP connections,
	// below TLS and HTTP/2: tests use it to cut a link the way a network does.
	WrapDial func(cluster types.NamespacedName, dial DialFunc) DialFunc
	// CacheTransform, if set, gives the transform of each connection's cache
	// (cache.Options.DefaultTransform), so that the cache keeps less than whole objects. It is
	// called once per connection, so a transform may keep state for one cluster's cache.
	CacheTransform func(cluster types.NamespacedName) toolscache.TransformFunc
	// Kubeconfigs is what Clusters' kubeconfigs may ask of the controller (exec credential
	// plugins it may run, for Clusters of which namespaces); the zero policy runs none.
	Kubeconfigs KubeconfigPolicy
	// OnWatch, if set, is called for every watch request sent to a target cluster, with the
	// resource as "v1/configmaps" or "apps/v1/deployments"; see WatchRequests.
	OnWatch func(cluster types.NamespacedName, resource string)
	// Clock tells the time of the breakers of unresponsive clusters (breaker.go); the real
	// clock when nil.
	Clock clock.PassiveClock
}

// DialFunc opens a network connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// Registry holds one Connection per Cluster. It is safe for concurrent use.
type Registry struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc

	mu    sync.RWMutex
	conns map[types.NamespacedName]*Connection

	watches    watchCounts
	recoveries listeners[types.NamespacedName]
	closed     listeners[*Connection]
	connected  listeners[types.NamespacedName]
}

// NewRegistry returns an empty registry. Connections' caches run until Close or until the
// context given to Start ends.
func NewRegistry(opts Options) *Registry {
	if opts.ProbeTimeout == 0 {
		opts.ProbeTimeout = 10 * time.Second
	}
	if opts.ReadIdleTimeout == 0 {
		opts.ReadIdleTimeout = DefaultReadIdleTimeout
	}
	if opts.PingTimeout <= 0 {
		opts.PingTimeout = DefaultPingTimeout
	}
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.QPS == 0 {
		opts.QPS = DefaultQPS
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Burst == 0 {
		opts.Burst = DefaultBurst
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Registry{opts: opts, ctx: ctx, cancel: cancel, conns: map[types.NamespacedName]*Connection{}}
}

// Start implements manager.Runnable: it closes every connection when ctx ends.
func (r *Registry) Start(ctx context.Context) error {
	<-ctx.Done()
	r.Close()
	return nil
}

// Close tears every connection down.
func (r *Registry) Close() {
	r.cancel()
	r.mu.Lock()
	closed := make([]*Connection, 0, len(r.conns))
	for k, c := range r.conns {
		c.close()
		delete(r.conns, k)
		closed = append(closed, c)
	}
	r.mu.Unlock()
	for _, c := range closed {
		r.closed.notify(c)
	}
}

// OnClosed registers f to be called with each connection the registry lets go, once its cache
// has stopped: removed (Remove: the Cluster was deleted or paused, or its kubeconfig is no longer
// usable), replaced by one built from a changed kubeconfig (Connect), or closed with the
// registry (Close). What others keep about a connection (handlers on its cache's informers) is
// dropped there; nothing else tells them the cache is gone. f runs on the goroutine that let the
// connection go, a reconcile's: it must not block.
func (r *Registry) OnClosed(f func(*Connection)) {
	r.closed.add(f)
}

// Connect returns the connection for key built from kubeconfig. A connection built from the same
// kubeconfig is reused; a changed kubeconfig replaces it. origin is the caller's note of where the
// kubeconfig came from (e.g. a Secret's UID and resourceVersion), returned by Origin, so that the
// caller can skip reading the kubeconfig again while its source is unchanged. The returned
// connection has not been probed: call Probe.
func (r *Registry) Connect(key types.NamespacedName, origin string, kubeconfig []byte) (*Connection, error) {
	fp := fingerprint(kubeconfig)
	r.mu.RLock()
	existing := r.conns[key]
	r.mu.RUnlock()
	if existing != nil && existing.fingerprint == fp {
		existing.origin.Store(origin)
		return existing, nil
	}

	cfg, err := r.opts.Kubeconfigs.RESTConfig(key.Namespace, kubeconfig)
	if err != nil {
		return nil, err
	}
	return r.register(key, fp, origin, cfg)
}

// ConnectConfig is Connect for a cluster reached by cfg rather than a kubeconfig the hub holds:
// a Pull cluster's agent connecting to its own cluster (package agent). A connection with the
// same origin is reused.
func (r *Registry) ConnectConfig(key types.NamespacedName, origin string, cfg *rest.Config) (*Connection, error) {
	fp := fingerprint([]byte("config:" + origin))
	r.mu.RLock()
	existing := r.conns[key]
	r.mu.RUnlock()
	if existing != nil && existing.fingerprint == fp {
		return existing, nil
	}
	return r.register(key, fp, origin, rest.CopyConfig(cfg))
}

// register builds the connection of key from cfg and puts it in place of the one before.
func (r *Registry) register(key types.NamespacedName, fp, origin string, cfg *rest.Config) (*Connection, error) {
	conn, err := r.newConnection(key, fp, cfg)
	if err != nil {
		return nil, err
	}
	conn.origin.Store(origin)

	r.mu.Lock()
	old := r.conns[key]
	r.conns[key] = conn
	r.mu.Unlock()
	if old != nil {
		old.close()
		r.closed.notify(old)
	}
	r.connected.notify(key)
	return conn, nil
}

// OnConnected registers f to be called with the cluster's key each time Connect registers a new
// connection (the first, or one built from a changed kubeconfig), before Connect returns it: what
// waits for this process to connect to a cluster (Get returned nil), a replica taking over a
// cluster from another, is told at once rather than polling. The connection has not been probed
// yet. f runs on the goroutine that called Connect, a reconcile's: it must not block.
func (r *Registry) OnConnected(f func(cluster types.NamespacedName)) {
	r.connected.add(f)
}

// Get returns the connection for key, or nil.
func (r *Registry) Get(key types.NamespacedName) *Connection {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.conns[key]
}

// Remove tears down the connection for key; it reports whether there was one.
func (r *Registry) Remove(key types.NamespacedName) bool {
	r.mu.Lock()
	conn := r.conns[key]
	delete(r.conns, key)
	r.mu.Unlock()
	if conn == nil {
		return false
	}
	conn.close()
	r.closed.notify(conn)
	return true
}

// Keys lists the clusters with a connection, sorted.
func (r *Registry) Keys() []types.NamespacedName {
	r.mu.RLock()
	keys := make([]types.NamespacedName, 0, len(r.conns))
	for k := range r.conns {
		keys = append(keys, k)
	}
	r.mu.RUnlock()
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}

func (r *Registry) newConnection(key types.NamespacedName, fp string, cfg *rest.Config) (*Connection, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = r.opts.QPS, r.opts.Burst
	cfg.UserAgent = "holdfast"
	transport, err := r.useOwnTransport(key, cfg)
	if err != nil {
		return nil, fmt.Errorf("building the transport for cluster %s: %w", key, err)
	}
	cfg.Wrap(RefuseRedirects)
	if wrap := r.opts.WrapTransport; wrap != nil {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return wrap(key, rt) })
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &watchCounter{cluster: key, counts: &r.watches, onWatch: r.opts.OnWatch, next: rt}
	})
	if r.opts.RequestTimeout > 0 {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return &requestTimeout{timeout: r.opts.RequestTimeout, next: rt}
		})
	}

	probeCfg := rest.CopyConfig(cfg)
	probeCfg.Timeout = r.opts.ProbeTimeout
	// After the probe's copy: probes say whether the cluster answers at all, the breaker only
	// spares workers the requests bound to time out.
	brk := &breaker{clock: r.opts.Clock}
	cfg.Wrap(brk.wrap)
	probeClient, err := newProbeClient(probeCfg)
	if err != nil {
		return nil, fmt.Errorf("building the probe client for cluster %s: %w", key, err)
	}
	cl, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = r.opts.Scheme
		o.MapperProvider = NewRESTMapper
		o.Cache.DefaultLabelSelector = r.opts.CacheSelector
		if r.opts.CacheTransform != nil {
			o.Cache.DefaultTransform = r.opts.CacheTransform(key)
		}
		o.Logger = ctrl.Log.WithName("fleet").WithValues("cluster", key.String())
	})
	if err != nil {
		return nil, fmt.Errorf("building the client for cluster %s: %w", key, err)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	conn := &Connection{
		key: key, fingerprint: fp, config: cfg, transport: transport, probeClient: probeClient, probeTimeout: r.opts.ProbeTimeout,
		cluster: cl, cancel: cancel, done: make(chan struct{}), recoveries: &r.recoveries, breaker: brk, ctxDone: ctx.Done(),
	}
	go func() {
		defer close(conn.done)
		if err := cl.Start(ctx); err != nil {
			ctrl.Log.WithName("fleet").Error(err, "Cache of cluster stopped", "cluster", key.String())
		}
	}()
	return conn, nil
}

func fingerprint(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Connection is a live link to one target cluster.
type Connection struct {
	key          types.NamespacedName
	fingerprint  string
	config       *rest.Config
	transport    *connTransport
	probeClient  probeClient
	probeTimeout time.Duration
	cluster      cluster.Cluster
	cancel       context.CancelFunc
	done         chan struct{}
	origin       atomic.Value
	health       health
	reviewed     reviewed
	recoveries   *listeners[types.NamespacedName]
	// impersonating are the clients of ClientAs.
	impersonating clientCache
	// breaker fails requests at once while the cluster lets them time out (breaker.go).
	breaker *breaker
	// access: what the identity may do, and the clients that ask (access.go).
	access access
	// identity: who Holdfast is on the cluster, and its attribution API (identity.go).
	identity identity
	ctxDone  <-chan struct{}
}

// Origin is the origin given to the Connect call that last returned this connection.
func (c *Connection) Origin() string {
	o, _ := c.origin.Load().(string)
	return o
}

// Key is the Cluster the connection belongs to.
func (c *Connection) Key() types.NamespacedName { return c.key }

// RESTConfig returns a copy of the connection's REST config.
func (c *Connection) RESTConfig() *rest.Config { return rest.CopyConfig(c.config) }

// Client reads from the cluster's cache (Holdfast-managed objects only, when the registry has a
// cache selector) and writes to its API server, as Holdfast's own identity (see ClientAs).
// Unstructured objects are read from the API server: with a CacheTransform, the cache may hold
// something other than the objects.
func (c *Connection) Client() client.Client { return c.cluster.GetClient() }

// APIReader reads straight from the cluster's API server.
func (c *Connection) APIReader() client.Reader { return c.cluster.GetAPIReader() }

// Cluster gives access to the cluster's cache, REST mapper and scheme, for watches.
func (c *Connection) Cluster() cluster.Cluster { return c.cluster }

// Probe checks that the API server answers and accepts the credentials. Errors are *ProbeError.
func (c *Connection) Probe(ctx context.Context) (ProbeResult, error) {
	ctx, cancel := context.WithTimeout(ctx, c.probeTimeout)
	defer cancel()
	return probe(ctx, c.probeClient, &c.reviewed, time.Now())
}

func (c *Connection) close() {
	c.cancel()
	<-c.done
	c.impersonating.close()
	c.transport.closeIdle()
}

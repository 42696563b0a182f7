package webui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// DefaultAddress is where `holdfast ui` listens unless told otherwise: loopback only, because
// whoever reaches the page acts with the kubeconfig's credentials.
const DefaultAddress = "127.0.0.1:8090"

// The server reads the hub at a pace a person waits for.
const (
	hubQPS   = 50
	hubBurst = 100
	// readTimeout bounds the hub reads of one page.
	readTimeout = 20 * time.Second
	// shutdownTimeout bounds how long Serve waits for requests in flight when ctx ends.
	shutdownTimeout = 5 * time.Second
)

// Server serves the web view. Its client carries the user's own credentials.
type Server struct {
	cfg       *rest.Config
	client    client.WithWatch
	cache     atomic.Pointer[cache.Cache]
	log       logr.Logger
	changes   changes
	templates templates
	// identity is who the hub says the user is, shown in the header ("" when it would not say).
	identity string
	// token is the run's secret, in the printed URL and then in a cookie named cookie (one per
	// listener port); hosts are the Host values accepted, allowedHosts the ones the user added,
	// hostname the machine's (session.go, hosts.go).
	token        string
	cookie       string
	hosts        hostPolicy
	allowedHosts []string
	hostname     string
	// namespace narrows every read to one namespace of Clusters (a tenant's); "" reads all.
	namespace string
	// prometheus, when set, is where the charts come from; promErr why it could not be set.
	prometheus *prometheus
	promErr    error
}

// Option configures a Server.
type Option func(*Server)

// InNamespace shows only the Clusters of one namespace and their status objects: what a tenant,
// whose RBAC stops at its namespace, may read.
func InNamespace(ns string) Option { return func(s *Server) { s.namespace = ns } }

// WithAllowedHosts accepts requests naming these hosts (names or addresses, a port ignored)
// besides the listener's own: the name of a proxy or of a DNS record in front of the server.
func WithAllowedHosts(hosts ...string) Option {
	return func(s *Server) { s.allowedHosts = append(s.allowedHosts, hosts...) }
}

// New returns a server that talks to the hub of cfg, with cfg's credentials.
func New(cfg *rest.Config, log logr.Logger, opts ...Option) (*Server, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = hubQPS, hubBurst
	cfg.UserAgent = "holdfast-ui"
	scheme := runtime.NewScheme()
	if err := holdfastv1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("adding Holdfast types to the scheme: %w", err)
	}
	if err := authenticationv1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("adding authentication/v1 to the scheme: %w", err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("building a client of the hub %s: %w", cfg.Host, err)
	}
	t, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	hostname, err := os.Hostname()
	if err != nil {
		log.V(1).Info("The machine's hostname is unknown; the web view answers to its addresses and localhost", "error", err)
	}
	s := &Server{cfg: cfg, client: c, log: log, templates: t, token: newToken(), hostname: hostname}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Serve serves the web view on ln until ctx is done. Only requests that name one of the
// listener's hosts, carry the run's secret (URLs gives the URL to open) and, for actions, come
// from the page itself are served.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.listenOn(ln.Addr())
	s.identity = s.whoAmI(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.startCache(ctx); err != nil {
		return err
	}
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, done := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer done()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// listenOn sets what the server accepts from the listener's address: its hosts and its cookie.
func (s *Server) listenOn(addr net.Addr) {
	s.hosts = newHostPolicy(addr, s.hostname, s.allowedHosts)
	s.cookie = cookieName(addr)
}

// handler routes the views, the event stream, the actions and the embedded assets, behind the
// checks every request passes, in order: a Host of the listener's (hosts.go), no action from
// another origin (net/http's CrossOriginProtection, by Sec-Fetch-Site and Origin), and the run's
// secret (session.go).
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.serveFleet)
	mux.HandleFunc("GET /drift", s.serveDrift)
	mux.HandleFunc("GET /charts", s.serveCharts)
	mux.HandleFunc("GET /preview/{name}", s.servePreview)
	mux.HandleFunc("GET /events", s.serveEvents)
	mux.HandleFunc("POST /actions/correct", s.serveCorrect)
	mux.HandleFunc("POST /actions/pause", s.servePause)
	mux.HandleFunc("POST /actions/approve", s.serveApprove)
	mux.Handle("GET /static/", http.FileServerFS(assets))
	return securityHeaders(s.checkHost(http.NewCrossOriginProtection().Handler(s.authenticate(mux))))
}

// securityHeaders: the pages load nothing from elsewhere and run no inline script, and no other
// site may frame them.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// whoAmI asks the hub who the credentials are (a SelfSubjectReview), for the header.
func (s *Server) whoAmI(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	review := &authenticationv1.SelfSubjectReview{}
	if err := s.client.Create(ctx, review); err != nil {
		s.log.V(1).Info("The hub would not say who the user is", "error", err)
		return ""
	}
	return review.Status.UserInfo.Username
}

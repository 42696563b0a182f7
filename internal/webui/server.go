package webui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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
	// hosts are the Host headers accepted; nil accepts any (a non-loopback address).
	hosts map[string]bool
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
	s := &Server{cfg: cfg, client: c, log: log, templates: t}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Serve serves the web view on ln until ctx is done. Requests from other origins are refused;
// on a loopback listener, so are requests whose Host is not that loopback address.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.hosts = loopbackHosts(ln.Addr())
	s.identity = s.whoAmI(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.startCache(ctx); err != nil {
		return err
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
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

// Handler routes the views, the event stream, the actions and the embedded assets.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.serveFleet)
	mux.HandleFunc("GET /drift", s.serveDrift)
	mux.HandleFunc("GET /charts", s.serveCharts)
	mux.HandleFunc("GET /events", s.serveEvents)
	mux.HandleFunc("POST /actions/correct", s.serveCorrect)
	mux.HandleFunc("POST /actions/pause", s.servePause)
	mux.Handle("GET /static/", http.FileServerFS(assets))
	return securityHeaders(s.checkHost(http.NewCrossOriginProtection().Handler(mux)))
}

// loopbackHosts are the Host values a loopback listener accepts: its address under each name
// of the loopback interface. Any other is refused, so that a web site whose name resolves to
// 127.0.0.1 (DNS rebinding) cannot read the pages. A listener on another address accepts any
// Host (nil).
func loopbackHosts(addr net.Addr) map[string]bool {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		return nil
	}
	port := fmt.Sprint(tcp.Port)
	hosts := map[string]bool{}
	for _, h := range []string{"localhost", "127.0.0.1", "::1", tcp.IP.String()} {
		hosts[net.JoinHostPort(h, port)] = true
	}
	return hosts
}

func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.hosts != nil && !s.hosts[r.Host] {
			http.Error(w, "this server answers only to its loopback address", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
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

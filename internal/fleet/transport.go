package fleet

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"golang.org/x/net/http2"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// Defaults of how a target cluster's transport notices a dead connection.
const (
	// DefaultReadIdleTimeout and DefaultPingTimeout: an HTTP/2 connection that received nothing
	// for 10s is pinged, and closed when the ping is not answered within 5s, so a connection
	// a network black-holed (no error, no reset) is given up within 15s of its last frame.
	// client-go's defaults, 30s and 15s, leave a watch dead for up to 45s.
	DefaultReadIdleTimeout = 10 * time.Second
	DefaultPingTimeout     = 5 * time.Second
	// DefaultRequestTimeout bounds a request that is not a watch: an API server gives up on
	// those after 60s (its --request-timeout) too.
	DefaultRequestTimeout = 60 * time.Second
)

// dialer opens targets' TCP connections, with client-go's timeouts.
var dialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// connTransport is the HTTP transport of one connection, shared by its clients, cache and probe.
type connTransport struct {
	*http.Transport
	h2 *http2.Transport // nil when HTTP/2 is off
}

// closeIdle closes the transport's connections that carry no request.
func (t *connTransport) closeIdle() {
	t.CloseIdleConnections()
	if t.h2 != nil {
		t.h2.CloseIdleConnections()
	}
}

// useOwnTransport makes cfg, the REST config of cluster's connection, send its requests through
// a transport of its own (newTransport), and returns that transport. The kubeconfig's exec
// credential plugin, if any, is set up as client-go's rest.TransportFor sets it up
// (rest.Config.TransportConfig runs the plugin's authenticator): its client certificate callback
// goes into the transport's TLS configuration, its connection tracker around the transport's
// dialer (a rotated certificate closes the connections made with the old one), and its
// round tripper, which adds the token and fetches new credentials on 401 Unauthorized, into cfg's
// WrapTransport. client-go refuses a custom transport beside TLS options or a plugin that brings
// a certificate ("using a custom transport with TLS certificate options or the insecure flag is
// not allowed"), so cfg is left with the transport and the plugin's round tripper only.
func (r *Registry) useOwnTransport(cluster types.NamespacedName, cfg *rest.Config) (*connTransport, error) {
	withDial := rest.CopyConfig(cfg)
	withDial.Dial = dialer.DialContext
	if wrap := r.opts.WrapDial; wrap != nil {
		withDial.Dial = wrap(cluster, withDial.Dial)
	}
	tc, err := withDial.TransportConfig()
	if err != nil {
		return nil, fmt.Errorf("setting up the credentials: %w", err)
	}
	t, err := r.newTransport(tc)
	if err != nil {
		return nil, err
	}
	cfg.Transport = t.Transport
	cfg.TLSClientConfig = rest.TLSClientConfig{}
	cfg.Proxy, cfg.Dial = nil, nil
	cfg.ExecProvider, cfg.WrapTransport = nil, tc.WrapTransport
	return t, nil
}

// newTransport builds a connection's transport from tc as client-go builds one (TLS, a client
// certificate callback included, proxy, dial and handshake timeouts), but with its HTTP/2 health
// check set from the registry's options instead of client-go's process-wide environment
// variables (HTTP2_READ_IDLE_TIMEOUT_SECONDS, HTTP2_PING_TIMEOUT_SECONDS): a closed connection
// fails the watches on it, so their informers list and watch again on a new one. Like
// client-go, DISABLE_HTTP2 turns HTTP/2 off, and with it the health check.
func (r *Registry) newTransport(tc *transport.Config) (*connTransport, error) {
	tlsCfg, err := transport.TLSConfigFor(tc)
	if err != nil {
		return nil, fmt.Errorf("building the TLS configuration: %w", err)
	}
	dial := dialer.DialContext
	if tc.DialHolder != nil {
		dial = tc.DialHolder.Dial
	}
	t := &connTransport{Transport: utilnet.SetOldTransportDefaults(&http.Transport{
		Proxy:               tc.Proxy,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsCfg,
		MaxIdleConnsPerHost: 25,
		DialContext:         dial,
		DisableCompression:  tc.DisableCompression,
	})}
	if os.Getenv("DISABLE_HTTP2") != "" || (tlsCfg != nil && len(tlsCfg.NextProtos) > 0 && !slices.Contains(tlsCfg.NextProtos, http2.NextProtoTLS)) {
		return t, nil
	}
	if t.h2, err = http2.ConfigureTransports(t.Transport); err != nil {
		return nil, fmt.Errorf("configuring HTTP/2: %w", err)
	}
	t.h2.ReadIdleTimeout, t.h2.PingTimeout = max(r.opts.ReadIdleTimeout, 0), max(r.opts.PingTimeout, 0)
	return t, nil
}

// requestTimeout bounds every request to a target cluster but watches, which stay open by
// design, including the time to read the response: a request on a connection that died, or
// to a server that hung, fails instead of holding its caller. client-go's rest.Config.Timeout
// cannot do this, as it would end watches too.
type requestTimeout struct {
	timeout time.Duration
	next    http.RoundTripper
}

func (t *requestTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	if isWatch(req) {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// WrappedRoundTripper lets client-go find the transport under this one.
func (t *requestTimeout) WrappedRoundTripper() http.RoundTripper { return t.next }

// cancelOnClose releases a request's timeout when its response is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	defer b.cancel()
	return b.ReadCloser.Close()
}

// isWatch reports whether a request is a watch (a GET with watch=true).
func isWatch(req *http.Request) bool {
	if req.Method != http.MethodGet || req.URL == nil {
		return false
	}
	w := req.URL.Query().Get("watch")
	return w == "true" || w == "1"
}

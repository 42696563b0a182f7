package fleet

import (
	"bufio"
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestTransportOptions(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	tests := []struct {
		name           string
		opts           Options
		disableHTTP2   bool
		wantHTTP2      bool
		wantIdle       time.Duration
		wantPing       time.Duration
		wantReqTimeout time.Duration
	}{
		{name: "defaults", wantHTTP2: true, wantIdle: DefaultReadIdleTimeout, wantPing: DefaultPingTimeout, wantReqTimeout: DefaultRequestTimeout},
		{name: "set", opts: Options{ReadIdleTimeout: 2 * time.Second, PingTimeout: time.Second, RequestTimeout: 30 * time.Second},
			wantHTTP2: true, wantIdle: 2 * time.Second, wantPing: time.Second, wantReqTimeout: 30 * time.Second},
		{name: "health check and request timeout off", opts: Options{ReadIdleTimeout: -1, RequestTimeout: -1},
			wantHTTP2: true, wantIdle: 0, wantPing: DefaultPingTimeout, wantReqTimeout: -1},
		{name: "DISABLE_HTTP2", disableHTTP2: true, wantReqTimeout: DefaultRequestTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.disableHTTP2 {
				t.Setenv("DISABLE_HTTP2", "true")
			}
			r := NewRegistry(tc.opts)
			defer r.Close()
			tr, err := r.useOwnTransport(types.NamespacedName{Name: "c"}, rest.CopyConfig(cfg))
			if err != nil {
				t.Fatal(err)
			}
			if r.opts.RequestTimeout != tc.wantReqTimeout {
				t.Errorf("request timeout %v, want %v", r.opts.RequestTimeout, tc.wantReqTimeout)
			}
			if (tr.h2 != nil) != tc.wantHTTP2 {
				t.Fatalf("HTTP/2 configured: %v, want %v", tr.h2 != nil, tc.wantHTTP2)
			}
			if tr.h2 == nil {
				return
			}
			if tr.h2.ReadIdleTimeout != tc.wantIdle || tr.h2.PingTimeout != tc.wantPing {
				t.Errorf("ReadIdleTimeout %v, PingTimeout %v; want %v, %v", tr.h2.ReadIdleTimeout, tr.h2.PingTimeout, tc.wantIdle, tc.wantPing)
			}
		})
	}
}

// testServer is an HTTP/2 server over TLS: /stream?watch=true sends one line and then nothing,
// /slow answers only when its request ends, /late?watch=true answers after 600ms, /fast at once.
func testServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/stream":
			_, _ = io.WriteString(w, "{}\n")
			w.(http.Flusher).Flush()
			<-req.Context().Done()
		case "/slow":
			<-req.Context().Done()
		case "/late":
			time.Sleep(600 * time.Millisecond)
			_, _ = io.WriteString(w, "late")
		default:
			_, _ = io.WriteString(w, "fast")
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// connectTo returns an HTTP client of a registry connection to srv.
func connectTo(t *testing.T, srv *httptest.Server, opts Options) *http.Client {
	t.Helper()
	r := NewRegistry(opts)
	t.Cleanup(r.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	conn, err := r.Connect(types.NamespacedName{Name: "c"}, "", kubeconfig(t, func(c *clientcmdapi.Config) {
		c.Clusters["c"].Server, c.Clusters["c"].CertificateAuthorityData = srv.URL, ca
	}))
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(conn.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

// holes black-holes connections: once cut, they receive nothing and what is written is lost.
type holes struct {
	mu    sync.Mutex
	conns []*holeConn
}

func (h *holes) dial(_ types.NamespacedName, dial DialFunc) DialFunc {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		hc := &holeConn{Conn: c, cut: make(chan struct{}), closed: make(chan struct{})}
		h.mu.Lock()
		h.conns = append(h.conns, hc)
		h.mu.Unlock()
		return hc, nil
	}
}

func (h *holes) cutAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.conns {
		c.once.Do(func() { close(c.cut) })
	}
}

type holeConn struct {
	net.Conn
	once, closeOnce sync.Once
	cut, closed     chan struct{}
}

func (c *holeConn) Read(p []byte) (int, error) {
	select {
	case <-c.cut:
		<-c.closed
		return 0, net.ErrClosed
	default:
		return c.Conn.Read(p)
	}
}

func (c *holeConn) Write(p []byte) (int, error) {
	select {
	case <-c.cut:
		return len(p), nil
	default:
		return c.Conn.Write(p)
	}
}

func (c *holeConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// TestDeadConnectionIsGivenUp: a watch on a connection the network black-holed ends with an
// error within the health check's read idle and ping timeouts; without the check it hangs.
func TestDeadConnectionIsGivenUp(t *testing.T) {
	srv := testServer(t)
	for _, tc := range []struct {
		name     string
		idle     time.Duration
		wantEnds bool
	}{
		{name: "health check", idle: 200 * time.Millisecond, wantEnds: true},
		{name: "health check off", idle: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &holes{}
			hc := connectTo(t, srv, Options{ReadIdleTimeout: tc.idle, PingTimeout: 200 * time.Millisecond, WrapDial: h.dial})
			resp, err := hc.Get(srv.URL + "/stream?watch=true")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			if resp.ProtoMajor != 2 {
				t.Fatalf("protocol %s, want HTTP/2", resp.Proto)
			}
			body := bufio.NewReader(resp.Body)
			if _, err := body.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			h.cutAll()
			cut := time.Now()
			ended := make(chan error, 1)
			go func() {
				_, err := body.ReadString('\n')
				ended <- err
			}()
			select {
			case err := <-ended:
				if !tc.wantEnds {
					t.Fatalf("the watch ended (%v), though nothing checks the connection", err)
				}
				if err == nil {
					t.Fatal("the watch went on")
				}
				t.Logf("watch ended %s after the cut: %v", time.Since(cut).Round(time.Millisecond), err)
			case <-time.After(2 * time.Second):
				if tc.wantEnds {
					t.Fatal("the watch on a dead connection still hangs 2s after the cut")
				}
			}
		})
	}
}

// TestRequestTimeout: a request that gets no answer fails after the request timeout; a watch,
// and a response read after the request returned, are not cut.
func TestRequestTimeout(t *testing.T) {
	srv := testServer(t)
	hc := connectTo(t, srv, Options{RequestTimeout: 300 * time.Millisecond})

	start := time.Now()
	if resp, err := hc.Get(srv.URL + "/slow"); err == nil {
		_ = resp.Body.Close()
		t.Fatal("a request that got no answer succeeded")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the request failed after %s, want about 300ms", took)
	}
	// The timeout opened the connection's breaker: the next request fails at once, unsent.
	var ue *UnresponsiveError
	if resp, err := hc.Get(srv.URL + "/fast"); !errors.As(err, &ue) {
		if err == nil {
			_ = resp.Body.Close()
		}
		t.Fatalf("a request right after a timeout: %v, want an UnresponsiveError", err)
	}
	hc = connectTo(t, srv, Options{RequestTimeout: 300 * time.Millisecond})
	for _, path := range []string{"/late?watch=true", "/fast"} {
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		time.Sleep(400 * time.Millisecond) // past the timeout: reading the body still works
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || len(b) == 0 {
			t.Errorf("%s: read %q, %v", path, b, err)
		}
	}
}

package netpolicy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// DialFunc opens a connection, as net.Dialer.DialContext and http.Transport.DialContext do.
type DialFunc = func(ctx context.Context, network, address string) (net.Conn, error)

// Control returns a net.Dialer Control hook that refuses to connect to an address p refuses.
// It runs once per address tried, after the name is resolved and before the connection is
// opened, so it judges the address actually dialled. host is the name being dialled, for
// AllowedHosts and for the error.
func (p *Policy) Control(host string) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("the egress policy cannot judge %s address %q of %s", network, address, host)
		}
		return p.Check(host, ap.Addr())
	}
}

// DialContext returns a dial function that connects as d does, through p's Control hook. The
// hook d already has runs after p's.
func (p *Policy) DialContext(d *net.Dialer) DialFunc {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			host = address
		}
		check := p.Control(host)
		guarded := *d
		guarded.Control = nil
		guarded.ControlContext = func(ctx context.Context, network, address string, c syscall.RawConn) error {
			if err := check(network, address, c); err != nil {
				return err
			}
			switch {
			case d.ControlContext != nil:
				return d.ControlContext(ctx, network, address, c)
			case d.Control != nil:
				return d.Control(network, address, c)
			}
			return nil
		}
		return guarded.DialContext(ctx, network, address)
	}
}

// WrapDial returns a dial function that connects with dial and closes the connection, before
// anything is sent on it, when its remote address is one p refuses. It is for dial functions
// that are not a net.Dialer (tests wrap connections); a net.Dialer should use DialContext, which
// refuses before connecting.
func (p *Policy) WrapDial(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		conn, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		host, _, splitErr := net.SplitHostPort(address)
		if splitErr != nil {
			host = address
		}
		var remote netip.Addr
		if tcp, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
			remote = tcp.AddrPort().Addr()
		} else if ap, err := netip.ParseAddrPort(conn.RemoteAddr().String()); err == nil {
			remote = ap.Addr()
		}
		if err := p.Check(host, remote); err != nil {
			_ = conn.Close()
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
		return conn, nil
	}
}

// Transport returns a clone of http.DefaultTransport (its proxy from the environment, its
// timeouts) whose every connection is checked by p before it is opened.
func (p *Policy) Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = p.DialContext(&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second})
	return t
}

// Guard makes every connection t opens subject to p: through p's Control hook when t has no
// dial function of its own, else checked right after connecting (WrapDial). A DialTLSContext
// is wrapped as well.
func (p *Policy) Guard(t *http.Transport) {
	if t.DialContext == nil {
		t.DialContext = p.DialContext(&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second})
	} else {
		t.DialContext = p.WrapDial(t.DialContext)
	}
	if t.DialTLSContext != nil {
		t.DialTLSContext = p.WrapDial(t.DialTLSContext)
	}
}

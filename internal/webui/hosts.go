package webui

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// hostPolicy is the Host values the server answers to: the names and addresses it is reached by.
// A browser sends as Host the name it connected to. A web page whose own name its owner made
// resolve to this machine (DNS rebinding) is, to the browser, of the same origin as the server,
// so the browser lets it read the pages and post the forms; but it sends that name, which is
// not one of these, and is refused. The port is not compared: a page cannot choose the name of
// another origin, and a tunnel (ssh -L, kubectl port-forward) reaches the server on a port of
// its own.
type hostPolicy struct {
	// names are host names accepted, lower case, without a trailing dot.
	names map[string]bool
	// addrs are IP addresses accepted besides the loopback ones.
	addrs map[netip.Addr]bool
	// anyAddr accepts every IP address: a listener on every interface, which is reached by
	// addresses this machine may not know (a container's or a VM's forwarded port).
	anyAddr bool
}

// newHostPolicy is what a listener on addr answers to, on a machine named hostname (as the
// kernel knows it; "" when unknown), plus the names and addresses extra (--allowed-host).
//
// An IP address literal involves no name to rebind, so the loopback addresses, the listener's
// own and, on every interface, any address are accepted. Of names: localhost, which a browser
// resolves to loopback itself; the machine's hostname unless the listener is loopback only (it
// is not reached by that name then); and extra.
func newHostPolicy(addr net.Addr, hostname string, extra []string) hostPolicy {
	p := hostPolicy{names: map[string]bool{"localhost": true}, addrs: map[netip.Addr]bool{}}
	ip := listenerIP(addr)
	switch {
	case !ip.IsValid() || ip.IsLoopback():
	case ip.IsUnspecified():
		p.anyAddr = true
	default:
		p.addrs[ip] = true
	}
	if ip.IsValid() && !ip.IsLoopback() && hostname != "" {
		name := normalHost(hostname)
		p.names[name] = true
		// A hostname that is a domain name is also reached by its first label.
		if short, _, ok := strings.Cut(name, "."); ok && short != "" {
			p.names[short] = true
		}
	}
	for _, h := range extra {
		if h = normalHost(stripPort(h)); h == "" {
			continue
		}
		if a, err := netip.ParseAddr(h); err == nil {
			p.addrs[a.Unmap()] = true
		} else {
			p.names[h] = true
		}
	}
	return p
}

// listenerIP is the IP address a TCP listener is bound to; the zero Addr for other listeners.
func listenerIP(addr net.Addr) netip.Addr {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return netip.Addr{}
	}
	return ip.Unmap()
}

// allows says whether a request's Host (name or address, with or without a port) is accepted.
func (p hostPolicy) allows(hostport string) bool {
	host := normalHost(stripPort(hostport))
	if host == "" {
		return false
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		return a.IsLoopback() || p.anyAddr || p.addrs[a]
	}
	return p.names[host]
}

// stripPort removes a port, and the brackets around an IPv6 address.
func stripPort(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	if inner, ok := strings.CutPrefix(hostport, "["); ok {
		if inner, ok = strings.CutSuffix(inner, "]"); ok {
			return inner
		}
	}
	return hostport
}

// normalHost compares names as DNS does: case aside, with or without the root's trailing dot.
func normalHost(h string) string { return strings.ToLower(strings.TrimSuffix(h, ".")) }

// checkHost refuses a request whose Host the server does not answer to, before anything else
// reads it.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hosts.allows(r.Host) {
			http.Error(w, fmt.Sprintf("This server does not answer to the name %q: open the URL holdfast ui printed, or start it with --allowed-host to accept another name.", stripPort(r.Host)), http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

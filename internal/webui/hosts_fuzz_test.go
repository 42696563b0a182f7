package webui

import (
	"net"
	"net/netip"
	"testing"
)

// FuzzHostPolicy checks, for any Host header, what makes DNS rebinding impossible on a loopback
// listener (issue 27, finding 4): the only name accepted is localhost, and every address
// accepted is a loopback one — a name an attacker controls can point at 127.0.0.1, but never
// matches. It also checks that no header makes the policy panic.
func FuzzHostPolicy(f *testing.F) {
	for _, h := range []string{"127.0.0.1:8090", "localhost:8090", "LOCALHOST.", "[::1]:8090", "evil.example:8090",
		"localhost.evil.example", "[::ffff:127.0.0.1]:1", "127.1:8090", "0x7f.1", "[::1", "", ":", "[fe80::1%lo]:8090"} {
		f.Add(h)
	}
	p := newHostPolicy(&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8090}, "box.example.org", nil)
	f.Fuzz(func(t *testing.T, host string) {
		if !p.allows(host) {
			return
		}
		h := normalHost(stripPort(host))
		if h == "localhost" {
			return
		}
		ip, err := netip.ParseAddr(h)
		if err != nil {
			t.Fatalf("Host %q (%q) accepted on a loopback listener: neither localhost nor an address", host, h)
		}
		if !ip.Unmap().IsLoopback() {
			t.Fatalf("Host %q accepted on a loopback listener: %s is not a loopback address", host, ip)
		}
	})
}

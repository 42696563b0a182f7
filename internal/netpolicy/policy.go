package netpolicy

import (
	"fmt"
	"net/netip"
	"strings"
)

// Rule is why an address is refused; its text is used verbatim in errors.
type Rule string

// The rules, in the order they are checked.
const (
	RuleMetadata    Rule = "cloud metadata address"
	RuleUnspecified Rule = "unspecified address"
	RuleBroadcast   Rule = "broadcast address"
	RuleLinkLocal   Rule = "link-local address"
	RuleMulticast   Rule = "multicast address"
	// RuleLoopback and RulePrivate apply only with Options.DenyPrivate.
	RuleLoopback Rule = "loopback address"
	RulePrivate  Rule = "private address"
)

// Options configure a Policy. The zero value is the default policy.
type Options struct {
	// DenyPrivate also refuses loopback and private addresses (RuleLoopback, RulePrivate).
	DenyPrivate bool
	// AllowedHosts are allowed whatever the rules say: CIDRs (10.20.0.0/16), IP addresses,
	// host names (charts.internal.example.com) and domains (*.internal.example.com, which
	// does not include internal.example.com itself). A name is allowed whatever it resolves
	// to, so list names only when their DNS is trusted.
	AllowedHosts []string
}

// Policy decides which addresses may be connected to. A nil *Policy is the default policy.
// A Policy is immutable and safe for concurrent use.
type Policy struct {
	denyPrivate bool
	prefixes    []netip.Prefix
	names       map[string]bool
	domains     []string // ".example.com" for *.example.com
}

// New returns the policy o describes, or an error naming the first entry of AllowedHosts that is
// neither a CIDR, an IP address nor a host name.
func New(o Options) (*Policy, error) {
	p := &Policy{denyPrivate: o.DenyPrivate, names: map[string]bool{}}
	for _, raw := range o.AllowedHosts {
		entry := strings.TrimSpace(raw)
		if entry == "" {
			continue
		}
		if strings.Contains(entry, "/") {
			prefix, err := netip.ParsePrefix(entry)
			if err != nil {
				return nil, fmt.Errorf("allowed host %q is not a valid CIDR: %w", entry, err)
			}
			if prefix.Addr().Is4In6() {
				// ::ffff:10.0.0.0/104 means 10.0.0.0/8: addresses are judged unmapped.
				if prefix.Bits() < 96 {
					return nil, fmt.Errorf("allowed host %q mixes IPv4-mapped and other IPv6 addresses; give the IPv4 CIDR instead", entry)
				}
				prefix = netip.PrefixFrom(prefix.Addr().Unmap(), prefix.Bits()-96)
			}
			p.prefixes = append(p.prefixes, prefix.Masked())
			continue
		}
		if addr, err := netip.ParseAddr(entry); err == nil {
			if addr.Zone() != "" {
				return nil, fmt.Errorf("allowed host %q has an IPv6 zone; give the address without it", entry)
			}
			addr = addr.Unmap()
			p.prefixes = append(p.prefixes, netip.PrefixFrom(addr, addr.BitLen()))
			continue
		}
		name := normalizeName(entry)
		if domain, ok := strings.CutPrefix(name, "*."); ok {
			if !validName(domain) || !strings.Contains(domain, ".") {
				return nil, fmt.Errorf("allowed host %q is not a valid domain; write *.example.com", entry)
			}
			p.domains = append(p.domains, "."+domain)
			continue
		}
		if !validName(name) {
			return nil, fmt.Errorf("allowed host %q is neither a CIDR, an IP address nor a host name", entry)
		}
		p.names[name] = true
	}
	return p, nil
}

// Default returns the default policy: link-local, metadata, unspecified, broadcast and
// multicast addresses are refused, everything else is allowed.
func Default() *Policy { return &Policy{} }

// Check returns nil when host may be reached at addr, else a *DeniedError. host is the name
// that was dialled (a host name, or the address itself); it only matters when AllowedHosts
// lists names.
func (p *Policy) Check(host string, addr netip.Addr) error {
	if rule, refused := p.judge(host, addr); refused {
		return &DeniedError{Host: host, Addr: addr.WithZone(""), Rule: rule}
	}
	return nil
}

// judge returns the rule that refuses addr for host, if any.
func (p *Policy) judge(host string, addr netip.Addr) (Rule, bool) {
	a := addr.WithZone("").Unmap()
	if v4, ok := nat64(a); ok {
		a = v4
	}
	if p.allows(host, a) || p.allows(host, addr.WithZone("").Unmap()) {
		return "", false
	}
	rule := classify(a)
	switch rule {
	case "":
		return "", false
	case RuleLoopback, RulePrivate:
		return rule, p != nil && p.denyPrivate
	}
	return rule, true
}

func (p *Policy) allows(host string, a netip.Addr) bool {
	if p == nil {
		return false
	}
	for _, prefix := range p.prefixes {
		if prefix.Contains(a) {
			return true
		}
	}
	name := normalizeName(host)
	if name == "" {
		return false
	}
	if p.names[name] {
		return true
	}
	for _, d := range p.domains {
		if strings.HasSuffix(name, d) {
			return true
		}
	}
	return false
}

var (
	// metadata are cloud metadata services outside the link-local range: Alibaba Cloud's
	// (in the shared 100.64.0.0/10 range) and AWS's IPv6 endpoint (in fc00::/7). AWS, GCP,
	// Azure, OpenStack and most others answer on 169.254.169.254, which is link-local and
	// named here for a clearer error.
	metadata = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"),
		netip.MustParseAddr("100.100.100.200"),
		netip.MustParseAddr("fd00:ec2::254"),
	}
	thisNetwork   = netip.MustParsePrefix("0.0.0.0/8")
	broadcast     = netip.MustParseAddr("255.255.255.255")
	sharedAddress = netip.MustParsePrefix("100.64.0.0/10") // RFC 6598, carrier-grade NAT and some cluster networks
	nat64Prefix   = netip.MustParsePrefix("64:ff9b::/96")  // RFC 6052 well-known prefix
)

// classify returns the rule an address falls under, "" for a public address. a is unmapped.
func classify(a netip.Addr) Rule {
	switch {
	case !a.IsValid():
		return RuleUnspecified
	case isMetadata(a):
		return RuleMetadata
	case a.IsUnspecified() || thisNetwork.Contains(a):
		return RuleUnspecified
	case a == broadcast:
		return RuleBroadcast
	case a.IsLinkLocalUnicast():
		return RuleLinkLocal
	case a.IsMulticast():
		return RuleMulticast
	case a.IsLoopback():
		return RuleLoopback
	case a.IsPrivate() || sharedAddress.Contains(a):
		return RulePrivate
	}
	return ""
}

func isMetadata(a netip.Addr) bool {
	for _, m := range metadata {
		if a == m {
			return true
		}
	}
	return false
}

// nat64 returns the IPv4 address a NAT64 address of the well-known prefix stands for: on a
// NAT64 network, 64:ff9b::a9fe:a9fe reaches 169.254.169.254.
func nat64(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() || !nat64Prefix.Contains(a) {
		return netip.Addr{}, false
	}
	b := a.As16()
	return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
}

func normalizeName(host string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
}

// validName reports whether name is a DNS name: labels of letters, digits, '-' and '_'.
func validName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
				return false
			}
		}
	}
	return true
}

// DeniedError is a connection the policy refused.
type DeniedError struct {
	// Host is the name that was dialled, Addr the address it resolved to.
	Host string
	Addr netip.Addr
	Rule Rule
}

func (e *DeniedError) Error() string {
	if e.Host == "" || e.Host == e.Addr.String() {
		return fmt.Sprintf("the egress policy refuses connections to %s: %s", e.Addr, e.Rule)
	}
	return fmt.Sprintf("the egress policy refuses connections to %s (%s): %s", e.Host, e.Addr, e.Rule)
}

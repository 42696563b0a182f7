package netpolicy_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"holdfast.dev/holdfast/internal/netpolicy"
)

func TestCheck(t *testing.T) {
	strict, err := netpolicy.New(netpolicy.Options{DenyPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	allowing, err := netpolicy.New(netpolicy.Options{DenyPrivate: true, AllowedHosts: []string{
		"10.20.0.0/16", "192.168.1.5", "fd00:1::/32", "::ffff:172.16.0.0/116", "Charts.Internal.", "*.corp.example", "169.254.10.10",
	}})
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]*netpolicy.Policy{"default": netpolicy.Default(), "nil": nil, "strict": strict, "allowing": allowing}

	tests := []struct {
		policy, host, addr string
		want               netpolicy.Rule // "" allowed
	}{
		// Refused by default, IPv4 and IPv6, mapped or not.
		{"default", "", "169.254.169.254", netpolicy.RuleMetadata},
		{"nil", "", "169.254.169.254", netpolicy.RuleMetadata},
		{"default", "metadata.google.internal", "169.254.169.254", netpolicy.RuleMetadata},
		{"default", "", "::ffff:169.254.169.254", netpolicy.RuleMetadata},
		{"default", "", "64:ff9b::a9fe:a9fe", netpolicy.RuleMetadata}, // NAT64
		{"default", "", "100.100.100.200", netpolicy.RuleMetadata},
		{"default", "", "fd00:ec2::254", netpolicy.RuleMetadata},
		{"default", "", "169.254.0.1", netpolicy.RuleLinkLocal},
		{"default", "", "::ffff:169.254.0.1", netpolicy.RuleLinkLocal},
		{"default", "", "fe80::1", netpolicy.RuleLinkLocal},
		{"default", "", "fe80::1%eth0", netpolicy.RuleLinkLocal},
		{"default", "", "febf::1", netpolicy.RuleLinkLocal},
		{"default", "", "0.0.0.0", netpolicy.RuleUnspecified},
		{"default", "", "0.1.2.3", netpolicy.RuleUnspecified},
		{"default", "", "::", netpolicy.RuleUnspecified},
		{"default", "", "::ffff:0.0.0.0", netpolicy.RuleUnspecified},
		{"default", "", "255.255.255.255", netpolicy.RuleBroadcast},
		{"default", "", "224.0.0.1", netpolicy.RuleMulticast},
		{"default", "", "239.255.255.250", netpolicy.RuleMulticast},
		{"default", "", "ff02::1", netpolicy.RuleMulticast},
		{"default", "", "ff05::2", netpolicy.RuleMulticast},
		// Allowed by default: loopback, private, public.
		{"default", "", "127.0.0.1", ""},
		{"nil", "", "127.0.0.1", ""},
		{"default", "localhost", "::1", ""},
		{"default", "", "::ffff:127.0.0.1", ""},
		{"default", "", "10.96.0.1", ""},
		{"default", "", "192.168.1.1", ""},
		{"default", "", "fd12:3456::1", ""},
		{"default", "", "100.64.0.1", ""},
		{"default", "", "8.8.8.8", ""},
		{"default", "", "2001:4860:4860::8888", ""},
		{"default", "", "febf::1:0:0:0", netpolicy.RuleLinkLocal},
		{"default", "", "fec0::1", ""}, // deprecated site-local: unicast, routed as the network says
		// DenyPrivate: loopback and private ranges too, in every spelling.
		{"strict", "", "127.0.0.1", netpolicy.RuleLoopback},
		{"strict", "", "127.255.0.9", netpolicy.RuleLoopback},
		{"strict", "localhost", "::1", netpolicy.RuleLoopback},
		{"strict", "", "::ffff:127.0.0.1", netpolicy.RuleLoopback},
		{"strict", "", "64:ff9b::7f00:1", netpolicy.RuleLoopback},
		{"strict", "", "10.0.0.1", netpolicy.RulePrivate},
		{"strict", "", "172.16.0.1", netpolicy.RulePrivate},
		{"strict", "", "172.31.255.255", netpolicy.RulePrivate},
		{"strict", "", "192.168.0.1", netpolicy.RulePrivate},
		{"strict", "", "::ffff:192.168.0.1", netpolicy.RulePrivate},
		{"strict", "", "100.64.0.1", netpolicy.RulePrivate},
		{"strict", "", "100.127.255.254", netpolicy.RulePrivate},
		{"strict", "", "fd12:3456::1", netpolicy.RulePrivate},
		{"strict", "", "fc00::1", netpolicy.RulePrivate},
		{"strict", "", "172.32.0.1", ""},
		{"strict", "", "100.128.0.1", ""},
		{"strict", "", "8.8.8.8", ""},
		{"strict", "", "2001:4860:4860::8888", ""},
		{"strict", "", "169.254.169.254", netpolicy.RuleMetadata},
		// The allow-list overrides every rule for what it names, and nothing else.
		{"allowing", "", "10.20.3.4", ""},
		{"allowing", "", "::ffff:10.20.3.4", ""},
		{"allowing", "", "10.21.0.1", netpolicy.RulePrivate},
		{"allowing", "", "192.168.1.5", ""},
		{"allowing", "", "192.168.1.6", netpolicy.RulePrivate},
		{"allowing", "", "fd00:1:2::3", ""},
		{"allowing", "", "fd00:2::3", netpolicy.RulePrivate},
		{"allowing", "", "172.16.9.9", ""}, // from ::ffff:172.16.0.0/116, that is 172.16.0.0/20
		{"allowing", "", "172.17.0.1", netpolicy.RulePrivate},
		{"allowing", "charts.internal", "10.9.9.9", ""},
		{"allowing", "CHARTS.internal.", "127.0.0.1", ""},
		{"allowing", "evilcharts.internal", "10.9.9.9", netpolicy.RulePrivate},
		{"allowing", "charts.internal.evil.example", "10.9.9.9", netpolicy.RulePrivate},
		{"allowing", "a.b.corp.example", "10.9.9.9", ""},
		{"allowing", "corp.example", "10.9.9.9", netpolicy.RulePrivate},
		{"allowing", "", "169.254.10.10", ""},
		{"allowing", "", "169.254.169.254", netpolicy.RuleMetadata},
		{"allowing", "10.20.0.1", "169.254.169.254", netpolicy.RuleMetadata}, // the address decides, not what the name looks like
	}
	for _, tt := range tests {
		t.Run(tt.policy+"/"+tt.host+"/"+tt.addr, func(t *testing.T) {
			addr := netip.MustParseAddr(tt.addr)
			err := policies[tt.policy].Check(tt.host, addr)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var denied *netpolicy.DeniedError
			if !errors.As(err, &denied) || denied.Rule != tt.want {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), string(tt.want)) || !strings.Contains(err.Error(), addr.WithZone("").String()) ||
				(tt.host != "" && !strings.Contains(err.Error(), tt.host)) {
				t.Errorf("error %q does not name the host, the address and the rule", err)
			}
		})
	}
}

func TestNewRefusesInvalidEntries(t *testing.T) {
	for _, entry := range []string{"10.0.0.0/33", "10.0.0/8", "not a host", "*.com", "*.", "charts..example", "fe80::1%eth0", "::ffff:0:0/80", "http://charts.example"} {
		if _, err := netpolicy.New(netpolicy.Options{AllowedHosts: []string{entry}}); err == nil || !strings.Contains(err.Error(), entry) {
			t.Errorf("New(%q) = %v, want an error naming it", entry, err)
		}
	}
	if _, err := netpolicy.New(netpolicy.Options{AllowedHosts: []string{" ", "charts.example", "10.0.0.0/8", "::1", "*.corp.example", "chart_mirror.local"}}); err != nil {
		t.Errorf("valid entries refused: %v", err)
	}
}

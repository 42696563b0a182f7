package notify

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"holdfast.dev/holdfast/internal/netpolicy"
)

// TestEgressRefusalsAreFinal: a delivery the egress policy refuses, or a redirect to another
// host, is not retried (neither changes by itself), and its reason names the rule, not the
// webhook's host (its URL is a secret).
func TestEgressRefusalsAreFinal(t *testing.T) {
	denied := fmt.Errorf("Post: dial: %w", &netpolicy.DeniedError{Host: "hooks.internal.example", Addr: netip.MustParseAddr("169.254.169.254"), Rule: netpolicy.RuleMetadata})
	redirected := fmt.Errorf("Post: %w", &netpolicy.RedirectError{From: "hooks.example", To: "elsewhere.example"})
	for _, err := range []error{denied, redirected} {
		if retryable(&requestError{reason: networkReason(err), err: err}) {
			t.Errorf("%v is retried", err)
		}
	}
	if r := networkReason(denied); !strings.Contains(r, "egress policy") || !strings.Contains(r, string(netpolicy.RuleMetadata)) ||
		strings.Contains(r, "hooks.internal.example") {
		t.Errorf("reason %q: want the rule, not the host", r)
	}
	if r := networkReason(redirected); !strings.Contains(r, "redirected to another host") || strings.Contains(r, "elsewhere") {
		t.Errorf("reason %q", r)
	}
	if !retryable(&requestError{reason: "connection refused", err: fmt.Errorf("refused")}) {
		t.Error("a refused connection is not retried")
	}
}

package notify

import (
	"net/http"

	"holdfast.dev/holdfast/internal/netpolicy"
)

// NewHTTPClient returns the client a Dispatcher sends with unless Options.HTTPClient says
// otherwise. It connects only where egress allows (nil means netpolicy.Default(), which refuses
// link-local and cloud metadata addresses), and follows no redirect to another host: a 307 or
// 308 resends the body with its signature headers, so a receiver could otherwise hand a signed
// event to someone else, or point the controller at an address its URL does not show. Such
// failures are errors like any network error (the URL and the host stay out of them).
func NewHTTPClient(egress *netpolicy.Policy) *http.Client {
	return &http.Client{Transport: egress.Transport(), CheckRedirect: netpolicy.SameHost}
}

package fleet

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrRedirect is what a request to a target cluster fails with when the cluster's server
// answers with a redirect.
var ErrRedirect = errors.New("the cluster's API server answered with a redirect, which Holdfast does not follow")

// redirectDrain bounds what is read of a redirect's body before it is closed, so that its
// connection may be used again.
const redirectDrain = 4 << 10

// refuseRedirects makes every request to a target fail when the answer is a redirect. An API
// server never redirects; a server a Cluster names that does may point at any endpoint the
// controller can reach, and what that endpoint answers would come back to the Cluster's author
// in status (client-go follows redirects, turning a PATCH into a GET). The error names the
// status code only: neither the body nor the Location is quoted.
type refuseRedirects struct{ next http.RoundTripper }

// RefuseRedirects wraps a target cluster's transport (rest.Config.Wrap).
func RefuseRedirects(rt http.RoundTripper) http.RoundTripper { return &refuseRedirects{next: rt} }

func (t *refuseRedirects) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || !isRedirect(resp.StatusCode) {
		return resp, err
	}
	_, _ = io.CopyN(io.Discard, resp.Body, redirectDrain)
	_ = resp.Body.Close()
	return nil, fmt.Errorf("%w (%s)", ErrRedirect, httpStatus(int32(resp.StatusCode)))
}

// WrappedRoundTripper lets client-go find the transport underneath (utilnet.RoundTripperWrapper).
func (t *refuseRedirects) WrappedRoundTripper() http.RoundTripper { return t.next }

// isRedirect reports whether code sends the client elsewhere: every 3xx but 304 Not Modified,
// which is an answer to a conditional request.
func isRedirect(code int) bool {
	return code >= 300 && code < 400 && code != http.StatusNotModified
}

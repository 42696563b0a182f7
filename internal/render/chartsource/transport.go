package chartsource

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"holdfast.dev/holdfast/internal/netpolicy"
	"holdfast.dev/holdfast/internal/render"
)

// Reasons of the *render.Error a Source returns when the controller's policy, not the
// repository, refuses a request. Neither is transient: the template or the controller's flags
// have to change.
const (
	// ReasonEgressDenied: the repository, registry or a redirect points at an address the
	// egress policy (Options.Egress) refuses, or an index.yaml redirects to another host.
	ReasonEgressDenied = "EgressDenied"
	// ReasonInsecureSkipTLSVerifyForbidden: the template sets insecureSkipTLSVerify and the
	// controller forbids it (Options.ForbidInsecureSkipTLSVerify).
	ReasonInsecureSkipTLSVerifyForbidden = "InsecureSkipTLSVerifyForbidden"
)

// transports returns the verifying transport and the one for insecureSkipTLSVerify, both
// connecting only where opts.Egress allows. Every connection is checked, so a redirect hop,
// an OCI blob on a CDN or a token server is held to the policy as much as repoURL is.
func transports(opts Options) (secure, insecure *http.Transport) {
	if opts.Transport == nil {
		secure = opts.Egress.Transport()
	} else {
		secure = opts.Transport.Clone()
		opts.Egress.Guard(secure)
	}
	insecure = secure.Clone()
	if insecure.TLSClientConfig == nil {
		insecure.TLSClientConfig = &tls.Config{}
	}
	insecure.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // only when the user asked for it
	return secure, insecure
}

// redirectPolicy is the CheckRedirect of an HTTP repository request. An index.yaml is read
// from repoURL's host only: a repository that moved must be named by its new address, not
// followed to wherever it points. A chart archive follows redirects, as Helm does, because
// the common hosts need it (GitHub release downloads and GitLab's package registry redirect to
// object storage) and the index may name any host for it anyway; each hop is still dialled
// through the egress policy, and the Authorization header is dropped at the first change of
// host, so credentials reach only the host they were sent to.
func redirectPolicy(what string) func(*http.Request, []*http.Request) error {
	if what == indexYAML {
		return netpolicy.SameHost
	}
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if !netpolicy.SameHostname(via[0].URL, req.URL) {
			req.Header.Del("Authorization")
		}
		return nil
	}
}

// policyError explains a request the controller's policy refused, nil for any other error.
// It names the host, the address and the rule, never what the server sent.
func policyError(ref, what string, err error) error {
	var denied *netpolicy.DeniedError
	if errors.As(err, &denied) {
		hint := "check repoURL and what its host name resolves to"
		if denied.Rule == netpolicy.RuleLoopback || denied.Rule == netpolicy.RulePrivate {
			hint = "the controller is set to refuse internal addresses (--egress-deny-private): use a repository on a public address, or ask the operator to allow this host (--egress-allowed-hosts)"
		}
		return &render.Error{Reason: ReasonEgressDenied, Object: ref, Err: err, Message: fmt.Sprintf("%s was not fetched: %v; %s", what, denied, hint)}
	}
	var redirect *netpolicy.RedirectError
	if errors.As(err, &redirect) {
		return &render.Error{Reason: ReasonEgressDenied, Object: ref, Err: err, Message: fmt.Sprintf(
			"%s was not fetched: the repository redirected it from %s to another host, %s, and Holdfast reads a repository only from the host repoURL names; set repoURL to the repository's address on %s if you trust it", what, redirect.From, redirect.To, redirect.To)}
	}
	return nil
}

func insecureForbidden(ref string) error {
	return &render.Error{Reason: ReasonInsecureSkipTLSVerifyForbidden, Object: ref, Message: "insecureSkipTLSVerify is forbidden on this controller (--forbid-insecure-skip-tls-verify); " +
		"remove it and serve the repository with a certificate the controller trusts"}
}

// ctxTransport ties requests to a caller's context. Helm's registry client
// builds its requests on context.Background(), so without this a Load whose
// context expired would keep waiting on a registry that does not answer.
type ctxTransport struct {
	ctx  context.Context
	base http.RoundTripper
}

func (t ctxTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(t.ctx, cancel)
	release := func() {
		stop()
		cancel()
	}
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		release()
		if t.ctx.Err() != nil {
			return nil, t.ctx.Err()
		}
		return nil, err
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
	return resp, nil
}

// releasingBody releases the request's context when the body is closed.
type releasingBody struct {
	io.ReadCloser
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

// errDownloadLimit is what a registry operation fails with when it went over
// its byte budget or was refused by pullLimits; the caller turns it into a
// message that names the chart and the limit.
var errDownloadLimit = errors.New("download limit exceeded")

// byteBudget is how many response-body bytes one registry operation may read
// over all its requests. oras-go bounds each manifest and each blob by its
// declared size, but not the number of responses (a tag list can page
// forever) nor the bytes of a code path that trusts the server; this does.
type byteBudget struct {
	limit    int64
	used     atomic.Int64
	exceeded atomic.Bool
}

func newByteBudget(limit int64) *byteBudget { return &byteBudget{limit: limit} }

func (b *byteBudget) remaining() int64 { return b.limit - b.used.Load() }

// take counts n bytes read; false once the budget is spent.
func (b *byteBudget) take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.exceeded.Store(true)
		return false
	}
	return true
}

// limitTransport charges every response body to a byteBudget and fails the
// read that goes over it. A response announcing more than what is left is
// refused before its body is read.
type limitTransport struct {
	base   http.RoundTripper
	budget *byteBudget
}

func (t limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if req.Method != http.MethodHead && resp.ContentLength > t.budget.remaining() {
		_ = resp.Body.Close()
		t.budget.exceeded.Store(true)
		return nil, errDownloadLimit
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, budget: t.budget}
	return resp, nil
}

type limitedBody struct {
	io.ReadCloser
	budget *byteBudget
}

func (b *limitedBody) Read(p []byte) (int, error) {
	left := b.budget.remaining()
	if left < 0 {
		return 0, errDownloadLimit
	}
	// Read at most one byte past the budget: enough to tell a body that ends
	// exactly at the limit from one that goes on.
	if int64(len(p)) > left+1 {
		p = p[:left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if !b.budget.take(int64(n)) {
		return 0, errDownloadLimit
	}
	return n, err
}

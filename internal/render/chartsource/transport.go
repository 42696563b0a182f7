package chartsource

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
)

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

package chartsource

import (
	"context"
	"io"
	"net/http"
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

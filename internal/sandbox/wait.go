package sandbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

const (
	// readyTimeout bounds each wait for a process to become ready. A cold kube-apiserver on a
	// loaded two-core machine takes well under half of it.
	readyTimeout = 60 * time.Second
	pollInterval = 100 * time.Millisecond
)

// errStopping is returned by waits cut short because Stop was called, e.g. from a signal
// handler while Start was still waiting.
var errStopping = errors.New("control plane is being stopped")

// readinessCheck reports whether something is ready; its error explains why not and ends up
// in the timeout error.
type readinessCheck func(ctx context.Context) error

// waitReady polls check until it succeeds. It gives up early when p exits (quoting its
// output), ctx ends or Stop is called.
func waitReady(ctx context.Context, stopping <-chan struct{}, p *process, check readinessCheck) error {
	timedOut := errors.New("readiness timeout")
	ctx, cancel := context.WithTimeoutCause(ctx, readyTimeout, timedOut)
	defer cancel()
	// A probe must not outlive the process it probes: if the port turned out to belong to
	// someone else, the probe can hang for the client timeout after the process has died.
	checkCtx, cancelCheck := context.WithCancel(ctx)
	defer cancelCheck()
	go func() {
		select {
		case <-p.done:
		case <-stopping:
		case <-checkCtx.Done():
		}
		cancelCheck()
	}()
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	var last error
	for {
		last = check(checkCtx)
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return p.exitError()
		case <-stopping:
			return errStopping
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), timedOut) {
				return fmt.Errorf("%s not ready after %s (last check: %v); last output:\n%s", p.name, readyTimeout, last, p.tail.lastLines(tailLines))
			}
			return fmt.Errorf("waiting for %s: %w", p.name, ctx.Err())
		case <-ticker.C:
		}
	}
}

// httpOK is a readinessCheck that wants a 200 from url.
func httpOK(client *http.Client, url string) readinessCheck {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
		}
		return nil
	}
}

// newPollClient returns an HTTP client for readiness probes. Keep-alives are off because a
// pooled connection to a restarted API server would fail the first probe for no reason.
func newPollClient(caCert []byte, creds *keyPair) (*http.Client, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if caCert != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caCert) {
			return nil, errors.New("no certificate in CA bundle")
		}
		tlsConfig.RootCAs = pool
	}
	if creds != nil {
		cert, err := tls.X509KeyPair(creds.Cert, creds.Key)
		if err != nil {
			return nil, fmt.Errorf("loading client certificate: %w", err)
		}
		tlsConfig.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true},
	}, nil
}

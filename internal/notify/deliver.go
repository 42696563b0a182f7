package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/netpolicy"
)

// StatusError is a response outside 2xx.
type StatusError struct {
	StatusCode int
	// RetryAfter is the receiver's Retry-After, zero when absent.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("receiver answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// retryable reports whether another attempt may succeed: on network errors, server errors,
// timeouts (408) and rate limits (429), and a mail server's 4xx replies. Other client errors
// mean the request itself is wrong, as do a mail server's 5xx replies and a session that cannot
// be set up as the target requires.
func retryable(err error) bool {
	var (
		denied     *netpolicy.DeniedError
		redirected *netpolicy.RedirectError
		mailErr    *MailError
	)
	if errors.As(err, &denied) || errors.As(err, &redirected) {
		return false // the operator's policy or the receiver's answer will not change by itself
	}
	if errors.As(err, &mailErr) {
		return mailErr.temporary()
	}
	var se *StatusError
	if !errors.As(err, &se) {
		return true
	}
	return se.StatusCode >= 500 || se.StatusCode == http.StatusRequestTimeout || se.StatusCode == http.StatusTooManyRequests
}

// deliver sends one event, retrying until it is accepted, a failure is final, MaxAttempts is
// reached or ctx is done.
func (d *Dispatcher) deliver(ctx context.Context, dl *delivery) {
	t, e := dl.target, dl.event
	log := d.log.WithValues("target", t.Name, "event", e.Type, "id", e.ID())
	msg, err := render(t, e)
	if errors.Is(err, ErrNothingToSend) {
		return // e is not for this type (a commit status without a commit): not an outcome
	}
	if err != nil {
		log.Error(err, "Notification not sent")
		d.finish(t.Name, e, err)
		return
	}
	for attempt := 1; ; attempt++ {
		err := d.attempt(ctx, t, msg)
		if err == nil {
			log.V(1).Info("Notification sent", "attempt", attempt)
			d.finish(t.Name, e, nil)
			return
		}
		if ctx.Err() != nil {
			d.finish(t.Name, e, ErrStopped)
			return
		}
		status := statusOf(err)
		if !retryable(err) {
			log.Error(err, "Notification rejected by the receiver, not retrying", "attempt", attempt, "status", status)
			d.finish(t.Name, e, err)
			return
		}
		if attempt >= d.opts.MaxAttempts {
			log.Error(err, "Notification failed, giving up", "attempt", attempt, "status", status)
			d.finish(t.Name, e, err)
			return
		}
		wait := d.backoff(attempt, err)
		metrics.NotificationResult(t.Name, metrics.NotificationRetried)
		log.V(1).Info("Notification attempt failed, retrying", "attempt", attempt, "status", status, "error", err.Error(), "after", wait)
		select {
		case <-ctx.Done():
			d.finish(t.Name, e, ErrStopped)
			return
		case <-time.After(wait):
		}
	}
}

// finish counts and reports the outcome of an event.
func (d *Dispatcher) finish(target string, e Event, err error) {
	result := metrics.NotificationSent
	switch {
	case errors.Is(err, ErrStopped):
		result = metrics.NotificationDropped
	case err != nil:
		result = metrics.NotificationFailed
	}
	metrics.NotificationResult(target, result)
	d.report(target, e, err)
}

// attempt makes one attempt at delivering msg, within Timeout: a mail for Email targets, else
// a request, signed (when msg is) at the time it is made, so that a retry is not refused as a
// replay. Its errors never contain the URL or a credential.
func (d *Dispatcher) attempt(ctx context.Context, t Target, msg message) error {
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	if msg.mail != nil {
		return d.sendMail(ctx, t, msg.mail)
	}
	req, err := http.NewRequestWithContext(ctx, msg.method, msg.url, bytes.NewReader(msg.body))
	if err != nil {
		return &requestError{reason: "invalid request", err: err}
	}
	req.Header = msg.headerAt(d.opts.Clock.Now())
	resp, err := d.opts.HTTPClient.Do(req)
	if err != nil {
		return &requestError{reason: networkReason(err), err: err}
	}
	defer func() {
		// Read a little of the body so the connection can be reused; it is not logged.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
	}()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	return &StatusError{StatusCode: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
}

// backoff is the wait after the attempt-th failure: the receiver's Retry-After when it sent one,
// else InitialBackoff doubled per attempt with jitter; MaxBackoff at most.
func (d *Dispatcher) backoff(attempt int, err error) time.Duration {
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter > 0 {
		return min(se.RetryAfter, d.opts.MaxBackoff)
	}
	b := d.opts.MaxBackoff
	if attempt < 32 {
		b = min(d.opts.InitialBackoff<<(attempt-1), d.opts.MaxBackoff)
	}
	// Half fixed, half random: targets failing together spread out, and no wait is shorter
	// than half the step.
	half := b / 2
	return half + rand.N(b-half+1)
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		return max(time.Duration(s)*time.Second, 0)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// statusOf is the receiver's status code in err: an HTTP status, or a mail server's reply code.
func statusOf(err error) int {
	var (
		se *StatusError
		me *MailError
	)
	switch {
	case errors.As(err, &se):
		return se.StatusCode
	case errors.As(err, &me):
		return me.Code
	}
	return 0
}

// requestError is a request that got no response. Its message is a fixed reason: the errors of
// net/http and net quote the URL, host or address, which are part of the target's secret.
type requestError struct {
	reason string
	err    error
}

func (e *requestError) Error() string { return "request failed: " + e.reason }
func (e *requestError) Unwrap() error { return e.err }

func networkReason(err error) string {
	var (
		netErr  net.Error
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		authErr x509.UnknownAuthorityError
		hostErr x509.HostnameError
		recErr  tls.RecordHeaderError
	)
	var (
		denied     *netpolicy.DeniedError
		redirected *netpolicy.RedirectError
	)
	switch {
	case errors.As(err, &denied):
		// The rule, not the host: a webhook's URL is a secret.
		return "refused by the egress policy: " + string(denied.Rule)
	case errors.As(err, &redirected):
		return "redirected to another host, not followed"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	case errors.As(err, &dnsErr):
		return "name lookup failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by the receiver"
	case errors.As(err, &certErr), errors.As(err, &authErr), errors.As(err, &hostErr), errors.As(err, &recErr):
		return "TLS handshake failed"
	}
	return fmt.Sprintf("network error (%T)", innermost(err))
}

func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

package notify

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	gomail "github.com/wneessen/go-mail"
	gosmtp "github.com/wneessen/go-mail/smtp"
)

// Default ports of Email targets: submission with STARTTLS, and submission over implicit TLS.
const (
	smtpPort  = 587
	smtpsPort = 465
)

// MailError is a mail server's refusal of a step of the session, or a session that could not be
// set up as the target requires (no STARTTLS, no AUTH mechanism usable over the connection).
// Its message names the step and the server's reply code, never the server's text, which may
// quote the addresses.
type MailError struct {
	// Step is what failed: "session" (the greeting, EHLO, STARTTLS or AUTH), "MAIL FROM",
	// "RCPT TO" or "DATA".
	Step string
	// Reason says why, when the server sent no reply code.
	Reason string
	// Code is the server's reply code, 0 when it sent none.
	Code int
}

func (e *MailError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("mail server refused %s: %d", e.Step, e.Code)
	}
	return fmt.Sprintf("mail %s failed: %s", e.Step, e.Reason)
}

// temporary reports whether the server said to try again later (a 4xx reply).
func (e *MailError) temporary() bool { return e.Code >= 400 && e.Code < 500 }

// sendMail makes one attempt to deliver m to t's recipients through t's SMTP server, dialled
// through the egress policy: STARTTLS (or TLS from the start for smtps), AUTH when the target
// has a username, then MAIL FROM, RCPT TO and DATA. Its errors never contain the server's
// address, the addresses or the server's text.
func (d *Dispatcher) sendMail(ctx context.Context, t Target, m *mailMessage) error {
	u, err := url.Parse(t.URL)
	if err != nil {
		return &MailError{Step: "session", Reason: "invalid url"}
	}
	host := u.Hostname()
	port := smtpPort
	if u.Scheme == "smtps" {
		port = smtpsPort
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return &MailError{Step: "session", Reason: "invalid port"}
		}
	}
	tlsConfig := &tls.Config{ServerName: host, RootCAs: t.RootCAs, MinVersion: tls.VersionTLS12}
	dial := d.opts.Egress.DialContext(&net.Dialer{Timeout: d.opts.Timeout})
	policy := gomail.TLSMandatory
	switch {
	case u.Scheme == "smtps":
		// go-mail wraps only its own dialer in TLS: wrap this one here. The session is
		// then encrypted from the start and STARTTLS is not asked for.
		dial = tlsDial(dial, tlsConfig)
		policy = gomail.NoTLS
	case t.OpportunisticTLS:
		policy = gomail.TLSOpportunistic
	}
	opts := []gomail.Option{
		gomail.WithPort(port), gomail.WithTimeout(d.opts.Timeout), gomail.WithDialContextFunc(dial),
		gomail.WithTLSConfig(tlsConfig), gomail.WithTLSPolicy(policy),
	}
	if t.Username != "" {
		// The mechanisms the server offers, best first; PLAIN and LOGIN send the password
		// only over TLS (or to localhost).
		opts = append(opts, gomail.WithUsername(t.Username), gomail.WithPassword(t.Password),
			gomail.WithOpportunisticSMTPAuth(gomail.SMTPAuthSCRAMSHA256, gomail.SMTPAuthSCRAMSHA1, gomail.SMTPAuthPlain, gomail.SMTPAuthLogin, gomail.SMTPAuthCramMD5))
	}
	client, err := gomail.NewClient(host, opts...)
	if err != nil {
		return &MailError{Step: "session", Reason: "invalid settings"}
	}
	msg, err := m.build(t)
	if err != nil {
		return err
	}
	conn, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return sessionError(err)
	}
	defer func() { _ = client.CloseWithSMTPClient(conn) }()
	if err := client.SendWithSMTPClient(conn, msg); err != nil {
		return sendError(err)
	}
	return nil
}

// build makes the mail of m from t to t's recipients.
func (m *mailMessage) build(t Target) (*gomail.Msg, error) {
	msg := gomail.NewMsg()
	// The errors are not wrapped: they would quote the addresses.
	if msg.From(t.From) != nil {
		return nil, &MailError{Step: "session", Reason: "invalid from address"}
	}
	if msg.To(t.To...) != nil {
		return nil, &MailError{Step: "session", Reason: "invalid to address"}
	}
	msg.Subject(m.subject)
	msg.SetMessageIDWithValue(m.id + "@holdfast.dev")
	msg.SetDate()
	msg.SetUserAgent("holdfast-notify")
	msg.SetBodyString(gomail.TypeTextPlain, m.text)
	return msg, nil
}

// tlsDial returns dial with a TLS handshake, verified with config, on each connection.
func tlsDial(dial func(ctx context.Context, network, address string) (net.Conn, error), config *tls.Config) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		conn, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(conn, config)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return nil, err
		}
		return tc, nil
	}
}

// sessionError classifies an error of the session's set-up: the server's reply code when it
// refused, a fixed reason when the session cannot be had as the target requires, a
// requestError for the network.
func sessionError(err error) error {
	var reply *textproto.Error
	switch {
	case errors.As(err, &reply):
		return &MailError{Step: "session", Code: reply.Code}
	case errors.Is(err, gomail.ErrNoSupportedAuthDiscovered), errors.Is(err, gomail.ErrPlainAuthNotSupported),
		errors.Is(err, gomail.ErrLoginAuthNotSupported):
		return &MailError{Step: "session", Reason: "the server offers no AUTH mechanism usable over this connection"}
	case errors.Is(err, gosmtp.ErrUnencrypted):
		return &MailError{Step: "session", Reason: "the server offers AUTH only without TLS; the password is not sent in clear"}
	case isStartTLSMissing(err):
		return &MailError{Step: "session", Reason: "the server does not offer STARTTLS (set starttls: opportunistic to send without)"}
	case isNetwork(err):
		return &requestError{reason: networkReason(err), err: err}
	}
	return &MailError{Step: "session", Reason: fmt.Sprintf("%T", innermost(err))}
}

// isStartTLSMissing reports go-mail's refusal to go on without STARTTLS, which it reports as
// text only.
func isStartTLSMissing(err error) bool {
	return strings.Contains(err.Error(), "does not support STARTTLS")
}

// isNetwork reports whether err is the network's or the TLS handshake's, rather than the
// server's answer or the session's settings.
func isNetwork(err error) bool {
	var (
		netErr   net.Error
		certErr  *tls.CertificateVerificationError
		alertErr tls.AlertError
		recErr   tls.RecordHeaderError
	)
	return errors.As(err, &netErr) || errors.As(err, &certErr) || errors.As(err, &alertErr) || errors.As(err, &recErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded)
}

// sendError classifies an error of MAIL FROM, RCPT TO or DATA.
func sendError(err error) error {
	var se *gomail.SendError
	if !errors.As(err, &se) {
		return sessionError(err)
	}
	step := "DATA"
	switch se.Reason {
	case gomail.ErrSMTPMailFrom:
		step = "MAIL FROM"
	case gomail.ErrSMTPRcptTo:
		step = "RCPT TO"
	case gomail.ErrGetSender, gomail.ErrGetRcpts, gomail.ErrNoUnencoded:
		return &MailError{Step: "DATA", Reason: se.Reason.String()}
	}
	if code := se.ErrorCode(); code != 0 {
		return &MailError{Step: step, Code: code}
	}
	// No reply: the connection failed during the step.
	return &requestError{reason: "connection failed during " + step, err: err}
}

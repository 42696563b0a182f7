package notify

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/netpolicy"
)

// fakeSMTP is a local mail server (go-smtp) that records the sessions Holdfast opens: whether
// they were encrypted, who authenticated, MAIL FROM, RCPT TO and the message.
type fakeSMTP struct {
	addr string
	// caPEM is the certificate of the server's own CA, for the target's ca key.
	caPEM string

	mu    sync.Mutex
	conns int
	mails []fakeMail
	auths []string
	// rcptCodes answer the n-th RCPT TO (from 0) with an error of that code; 0 accepts.
	rcptCodes []int
	rcpts     int
}

// fakeMail is a message the fake accepted.
type fakeMail struct {
	encrypted bool
	user      string
	from      string
	to        []string
	data      string
}

type fakeSMTPOptions struct {
	startTLS bool // offer STARTTLS
	implicit bool // TLS from the first byte (smtps)
	// notLocal listens on 127.0.0.2: go-mail, like net/smtp, sends a password in clear to
	// 127.0.0.1 and localhost, and to no other address.
	notLocal bool
}

func newFakeSMTP(t *testing.T, o fakeSMTPOptions) *fakeSMTP {
	t.Helper()
	cert, caPEM := selfSigned(t)
	f := &fakeSMTP{caPEM: caPEM}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &fakeSession{f: f, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}}
	if o.startTLS {
		srv.TLSConfig = tlsConfig
	}
	// Without TLS the fake still offers AUTH, so that a client that would send a password in
	// clear is caught doing so.
	srv.AllowInsecureAuth = true
	host := "127.0.0.1"
	if o.notLocal {
		host = "127.0.0.2"
	}
	l, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Fatal(err)
	}
	l = &countingListener{Listener: l, f: f}
	if o.implicit {
		l = tls.NewListener(l, tlsConfig)
	}
	f.addr = l.Addr().String()
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return f
}

// got returns how many connections the server accepted, the credentials it was sent and the
// mails it accepted.
func (f *fakeSMTP) got() (conns int, auths []string, mails []fakeMail) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conns, append([]string(nil), f.auths...), append([]fakeMail(nil), f.mails...)
}

type countingListener struct {
	net.Listener
	f *fakeSMTP
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.f.mu.Lock()
		l.f.conns++
		l.f.mu.Unlock()
	}
	return c, err
}

type fakeSession struct {
	f    *fakeSMTP
	conn *smtp.Conn
	mail fakeMail
}

func (s *fakeSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *fakeSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		s.f.mu.Lock()
		s.f.auths = append(s.f.auths, username+":"+password)
		s.f.mu.Unlock()
		if username != "holdfast" || password != "passw0rd" {
			return smtp.ErrAuthFailed
		}
		s.mail.user = username
		return nil
	}), nil
}

func (s *fakeSession) Mail(from string, _ *smtp.MailOptions) error {
	_, s.mail.encrypted = s.conn.TLSConnectionState()
	s.mail.from = from
	return nil
}

func (s *fakeSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.f.mu.Lock()
	n := s.f.rcpts
	s.f.rcpts++
	s.f.mu.Unlock()
	if n < len(s.f.rcptCodes) && s.f.rcptCodes[n] != 0 {
		return &smtp.SMTPError{Code: s.f.rcptCodes[n], Message: "mailbox " + to + " unavailable"}
	}
	s.mail.to = append(s.mail.to, to)
	return nil
}

func (s *fakeSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.mail.data = string(b)
	s.f.mu.Lock()
	s.f.mails = append(s.f.mails, s.mail)
	s.f.mu.Unlock()
	return nil
}

func (s *fakeSession) Reset()        { s.mail = fakeMail{user: s.mail.user} }
func (s *fakeSession) Logout() error { return nil }

// selfSigned returns a certificate for 127.0.0.1 and localhost, and its PEM.
func selfSigned(t *testing.T) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fake smtp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("127.0.0.2")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// emailSecret is the Secret of an Email target sending through f with scheme.
func (f *fakeSMTP) secret(scheme string, extra map[string]string) map[string]string {
	data := map[string]string{
		"url": scheme + "://" + f.addr, "from": "Holdfast <holdfast@example.com>", "to": "ops@example.com, dev@example.com",
		"username": "holdfast", "password": "passw0rd", "ca": f.caPEM,
	}
	for k, v := range extra {
		data[k] = v
	}
	return data
}

func TestEmailDelivery(t *testing.T) {
	cases := []struct {
		name    string
		server  fakeSMTPOptions
		scheme  string
		extra   map[string]string
		encrypt bool
		user    string
	}{
		{"STARTTLS and AUTH", fakeSMTPOptions{startTLS: true}, "smtp", nil, true, "holdfast"},
		{"TLS from the start (smtps)", fakeSMTPOptions{implicit: true}, "smtps", nil, true, "holdfast"},
		{"opportunistic, unauthenticated, to a server without STARTTLS", fakeSMTPOptions{}, "smtp",
			map[string]string{"starttls": "opportunistic", "username": "", "password": ""}, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeSMTP(t, c.server)
			data := f.secret(c.scheme, c.extra)
			if c.user == "" {
				delete(data, "username")
				delete(data, "password")
			}
			h := start(t, Options{MaxAttempts: 1})
			e := deploymentDrift()
			h.d.Send(resolve(t, holdfastv1.NotificationEmail, data), e)
			if r := h.next(t); r.err != nil {
				t.Fatalf("Email delivery failed: %v", r.err)
			}
			_, _, mails := f.got()
			if len(mails) != 1 {
				t.Fatalf("the server got %d mails, want 1", len(mails))
			}
			m := mails[0]
			if m.encrypted != c.encrypt || m.user != c.user || m.from != "holdfast@example.com" || strings.Join(m.to, ",") != "ops@example.com,dev@example.com" {
				t.Errorf("session: encrypted %v, user %q, MAIL FROM %q, RCPT TO %v", m.encrypted, m.user, m.from, m.to)
			}
			header, body := parseMail(t, m.data)
			for k, want := range map[string]string{
				"Subject": "[Holdfast] Drift detected: Deployment web/frontend on cluster fleet/eu-1",
				"From":    `"Holdfast" <holdfast@example.com>`, "To": "<ops@example.com>, <dev@example.com>",
				"Message-Id": "<" + e.ID() + "@holdfast.dev>", "Content-Type": "text/plain; charset=UTF-8",
			} {
				if got := header.Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
			if !strings.HasPrefix(body, "Drift detected on cluster fleet/eu-1") || !strings.Contains(body, "\n• .spec.replicas: 3 → 5\n") {
				t.Errorf("body:\n%s", body)
			}
		})
	}
}

// parseMail reads a single-part message as a mail reader would: its headers, unfolded and
// decoded, and its body, decoded from its transfer encoding, with LF line ends.
func parseMail(t *testing.T, data string) (mail.Header, string) {
	t.Helper()
	m, err := mail.ReadMessage(strings.NewReader(data))
	if err != nil {
		t.Fatalf("not a mail: %v\n%s", err, data)
	}
	var body io.Reader = m.Body
	if m.Header.Get("Content-Transfer-Encoding") == "quoted-printable" {
		body = quotedprintable.NewReader(body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	dec := new(mime.WordDecoder)
	for k, v := range m.Header {
		for i := range v {
			if d, err := dec.DecodeHeader(v[i]); err == nil {
				m.Header[k][i] = d
			}
		}
	}
	return m.Header, strings.ReplaceAll(string(b), "\r\n", "\n")
}

// TestEmailRefusals: what the server refuses, or a session that cannot be had as the target
// requires, fails the delivery, retried only on a 4xx reply; the error names the step, never the
// server, the addresses or the password, and a password is never sent in clear.
func TestEmailRefusals(t *testing.T) {
	cases := []struct {
		name      string
		server    fakeSMTPOptions
		extra     map[string]string
		rcptCodes []int
		egress    *netpolicy.Policy
		check     func(error) bool
		conns     int // connections the server accepted
		delivered bool
	}{
		{name: "no STARTTLS offered", server: fakeSMTPOptions{}, check: func(err error) bool {
			var me *MailError
			return errors.As(err, &me) && strings.Contains(me.Reason, "STARTTLS")
		}, conns: 1},
		{name: "opportunistic STARTTLS does not send the password in clear", server: fakeSMTPOptions{notLocal: true}, extra: map[string]string{"starttls": "opportunistic"},
			check: func(err error) bool {
				var me *MailError
				return errors.As(err, &me) && strings.Contains(me.Reason, "AUTH")
			}, conns: 1},
		{name: "a server the CA does not vouch for", server: fakeSMTPOptions{startTLS: true}, extra: map[string]string{"ca": ""},
			check: func(err error) bool {
				var re *requestError
				return errors.As(err, &re) && re.reason == "TLS handshake failed"
			}, conns: 3},
		{name: "wrong password", server: fakeSMTPOptions{startTLS: true}, extra: map[string]string{"password": "wr0ng"},
			check: func(err error) bool { var me *MailError; return errors.As(err, &me) && me.Code == 535 }, conns: 1},
		{name: "mailbox busy, then accepted", server: fakeSMTPOptions{startTLS: true}, rcptCodes: []int{450}, conns: 2, delivered: true},
		{name: "mailbox unknown", server: fakeSMTPOptions{startTLS: true}, rcptCodes: []int{550}, check: func(err error) bool {
			var me *MailError
			return errors.As(err, &me) && me.Step == "RCPT TO" && me.Code == 550
		}, conns: 1},
		{name: "egress policy", server: fakeSMTPOptions{startTLS: true}, egress: mustPolicy(t, netpolicy.Options{DenyPrivate: true}), check: func(err error) bool {
			var denied *netpolicy.DeniedError
			return errors.As(err, &denied) && denied.Rule == netpolicy.RuleLoopback
		}, conns: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeSMTP(t, c.server)
			f.rcptCodes = c.rcptCodes
			data := f.secret("smtp", c.extra)
			if data["ca"] == "" {
				delete(data, "ca")
			}
			h := start(t, Options{MaxAttempts: 3, Egress: c.egress})
			h.d.Send(resolve(t, holdfastv1.NotificationEmail, data), deploymentDrift())
			r := h.next(t)
			conns, auths, mails := f.got()
			switch {
			case c.delivered && (r.err != nil || len(mails) != 1):
				t.Fatalf("outcome %v, %d mails; want delivered once", r.err, len(mails))
			case !c.delivered && (r.err == nil || !c.check(r.err)):
				t.Fatalf("outcome %v (%T)", r.err, r.err)
			}
			if conns != c.conns {
				t.Errorf("the server got %d connections, want %d", conns, c.conns)
			}
			for _, a := range auths {
				if !c.server.startTLS && strings.Contains(a, "passw0rd") {
					t.Errorf("the password was sent without TLS")
				}
			}
			if r.err == nil {
				return
			}
			for _, s := range []string{r.err.Error(), h.logs.String()} {
				for _, secret := range []string{"127.0.0", "example.com", "passw0rd", "unavailable"} {
					if strings.Contains(s, secret) {
						t.Errorf("%q shows %q", s, secret)
					}
				}
			}
		})
	}
}

func mustPolicy(t *testing.T, o netpolicy.Options) *netpolicy.Policy {
	t.Helper()
	p, err := netpolicy.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEmailRedactsSecrets: a Secret's drifted value never reaches the mail server.
func TestEmailRedactsSecrets(t *testing.T) {
	const plain = "hunter2-s3cret"
	f := newFakeSMTP(t, fakeSMTPOptions{startTLS: true})
	h := start(t, Options{MaxAttempts: 1})
	h.d.Send(resolve(t, holdfastv1.NotificationEmail, f.secret("smtp", nil)), secretDrift(plain))
	if r := h.next(t); r.err != nil {
		t.Fatal(r.err)
	}
	_, _, mails := f.got()
	for _, s := range []string{plain, base64.StdEncoding.EncodeToString([]byte(plain)), "b2xkLXZhbHVl", "aHVudGVy"} {
		_, body := parseMail(t, mails[0].data)
		if strings.Contains(mails[0].data, s) || strings.Contains(body, s) {
			t.Errorf("the mail contains the Secret value %q", s)
		}
	}
}

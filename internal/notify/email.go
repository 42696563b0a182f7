package notify

import (
	"crypto/x509"
	"net/mail"
)

// emailConfigure reads the sender, the recipients, the optional SMTP AUTH credentials, whether
// STARTTLS is required and the optional CA. The url is smtp://host[:port] (port 587 by default,
// STARTTLS) or smtps://host[:port] (465 by default, TLS from the first byte).
func emailConfigure(t *Target, s secretKeys) error {
	from, err := s.required(SecretKeyFrom)
	if err != nil {
		return err
	}
	// The parse errors are not wrapped: they would quote the address.
	addr, err := mail.ParseAddress(from)
	if err != nil {
		return s.invalid(SecretKeyFrom, "is not a mail address")
	}
	t.From = addr.String()
	to, err := s.required(SecretKeyTo)
	if err != nil {
		return err
	}
	list, err := mail.ParseAddressList(to)
	if err != nil {
		return s.invalid(SecretKeyTo, "is not a comma-separated list of mail addresses")
	}
	for _, a := range list {
		t.To = append(t.To, a.String())
	}
	if t.Username, err = s.token(SecretKeyUsername); err != nil {
		return err
	}
	// The password is used byte for byte, as hmacKey is.
	password, hasPassword := s.value(SecretKeyPassword)
	t.Password = password
	switch {
	case t.Username != "" && password == "":
		return s.missing(SecretKeyPassword)
	case t.Username == "" && hasPassword:
		return s.missing(SecretKeyUsername)
	}
	starttls, err := s.oneOf(SecretKeyStartTLS, "required", "required", "opportunistic")
	if err != nil {
		return err
	}
	t.OpportunisticTLS = starttls == "opportunistic"
	if pem, ok := s.value(SecretKeyCA); ok {
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM([]byte(pem)) {
			return s.invalid(SecretKeyCA, "holds no PEM certificate")
		}
	}
	return nil
}

// mailMessage is a rendered Email notification.
type mailMessage struct {
	subject, text string
	// id is the Message-ID's local part: Event.ID, the same for every attempt, so that a
	// mail delivered twice can be recognised.
	id string
}

// emailMessage is a plain-text mail: the headline as its subject, the summary as its body.
func emailMessage(_ Target, e Event) (message, error) {
	return message{mail: &mailMessage{subject: "[Holdfast] " + headline(e), text: summary(e, plain) + "\n", id: e.ID()}}, nil
}

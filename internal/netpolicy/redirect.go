package netpolicy

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// maxRedirects is net/http's own limit.
const maxRedirects = 10

// SameHost is an http.Client CheckRedirect that follows a redirect only to the host of the
// first request (any port or scheme), and at most 10 of them, as net/http does. The refused
// redirect fails the request with a *RedirectError.
func SameHost(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	if from := via[0].URL; !SameHostname(from, req.URL) {
		return &RedirectError{From: from.Hostname(), To: req.URL.Hostname()}
	}
	return nil
}

// SameHostname reports whether a and b name the same host, whatever their ports and schemes.
func SameHostname(a, b *url.URL) bool {
	return normalizeName(a.Hostname()) == normalizeName(b.Hostname())
}

// RedirectError is a redirect to another host that was not followed.
type RedirectError struct {
	From, To string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the redirect from %s to another host, %s, was not followed", e.From, e.To)
}

package webui

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
)

// tokenParam is the query parameter of the URL `holdfast ui` prints that carries the run's
// secret, as Jupyter's does.
const tokenParam = "token"

// newToken is a run's secret: 128 random bits from crypto/rand (base32, 26 characters).
func newToken() string { return rand.Text() }

// cookieName is the cookie that holds the secret in the browser after the first visit. Browsers
// share a host's cookies among all its ports, so each port has a cookie of its own: two servers
// on one machine (a user's and a tenant's view) do not sign each other out.
func cookieName(addr net.Addr) string {
	port := 0
	if tcp, ok := addr.(*net.TCPAddr); ok {
		port = tcp.Port
	}
	return "holdfast-ui-" + strconv.Itoa(port)
}

// URLs are the addresses to open the web view served on addr at, each with the run's token: on
// this machine first, then, for a listener on every interface, by the machine's hostname
// (when known), for other machines.
func (s *Server) URLs(addr net.Addr) []string {
	port := "0"
	if tcp, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(tcp.Port)
	}
	at := func(host string) string {
		u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: "/", RawQuery: url.Values{tokenParam: {s.token}}.Encode()}
		return u.String()
	}
	ip := listenerIP(addr)
	switch {
	case ip.IsUnspecified():
		urls := []string{at("127.0.0.1")}
		if s.hostname != "" {
			urls = append(urls, at(s.hostname))
		}
		return urls
	case ip.IsValid():
		return []string{at(ip.String())}
	default:
		return []string{at("localhost")}
	}
}

// authenticate admits a request that carries the run's secret, in the cookie or, on the first
// visit, in the URL: the printed URL's token is checked and exchanged for the cookie, then the
// browser is sent to the same view without it, so that the token does not stay in the address
// bar or the history. The cookie is HttpOnly (no script reads it) and SameSite=Strict (no other
// site's page or form sends it). Every path needs it: the views, the event stream, the actions and
// the assets alike.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has(tokenParam) {
			s.signIn(w, r)
			return
		}
		if c, err := r.Cookie(s.cookie); err == nil && s.isSecret(c.Value) {
			next.ServeHTTP(w, r)
			return
		}
		refuse(w, "This page needs the token of this run of holdfast ui: open the URL it printed when it started (http://…/?token=…).")
	})
}

// signIn exchanges the URL's token for the cookie.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || !s.isSecret(query.Get(tokenParam)) {
		refuse(w, "The token in this URL is not this run's: open the URL holdfast ui printed when it started; each run has a token of its own.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	query.Del(tokenParam)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, (&url.URL{Path: landing(r.URL.Path), RawQuery: query.Encode()}).String(), http.StatusSeeOther)
}

// landing is where a signed-in browser is sent: the view it asked for, or the fleet. Only the
// views' own paths, so that the redirect never leads elsewhere ("//other.example").
func landing(path string) string {
	switch path {
	case navDrift, navCharts:
		return path
	default:
		return navFleet
	}
}

// isSecret compares a presented secret with the run's in constant time.
func (s *Server) isSecret(v string) bool {
	return s.token != "" && subtle.ConstantTimeCompare([]byte(v), []byte(s.token)) == 1
}

// refuse answers a request without the secret. The answer is plain text: no page, no asset, no
// data of the hub.
func refuse(w http.ResponseWriter, msg string) {
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, fmt.Sprintf("Unauthorized. %s", msg), http.StatusUnauthorized)
}

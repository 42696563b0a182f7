package fleet

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRedirectsAreNotFollowed: a Cluster's server that redirects (to an internal endpoint the
// controller can reach, which answers with what its author may not read) makes the probe fail
// with ErrRedirect, naming neither the endpoint nor anything it answered; the endpoint is
// never asked. Every client of a connection shares the probe's transport, so this holds for
// applies, watches and reviews too (the e2e TestRedirectingTargetQuotesNothing shows an apply).
func TestRedirectsAreNotFollowed(t *testing.T) {
	asked := 0
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked++
		answer(w, "text/plain", http.StatusInternalServerError, "internal service: "+bodyMarker)
	}))
	t.Cleanup(internal.Close)
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			_, err := probeServer(t, reviewing(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, internal.URL+"/"+bodyMarker, code)
			}))
			if !errors.Is(err, ErrRedirect) {
				t.Fatalf("probe error %v, want %v", err, ErrRedirect)
			}
			if all := fmt.Sprintf("%+v %#v", err, err); strings.Contains(all, bodyMarker) || strings.Contains(all, internal.URL) {
				t.Errorf("the error quotes the redirect or its target: %.300q", err.Error())
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("HTTP %d", code)) {
				t.Errorf("error %q does not name the status code", err)
			}
		})
	}
	if asked > 0 {
		t.Errorf("the redirect was followed %d times", asked)
	}
}

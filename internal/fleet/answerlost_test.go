package fleet

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestAnswerLostOverHTTP2: an API server (here a stand-in) that resets the HTTP/2 stream halfway
// through its answer makes client-go return an error whose cause net/http does not export; it is
// an answer lost (apply retries it), and redact words it as such without quoting the half answer.
func TestAnswerLostOverHTTP2(t *testing.T) {
	const half = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"secret-sauce"`
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(half))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the stream is reset
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)

	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().ConfigMaps("apps").Get(t.Context(), "web", metav1.GetOptions{})
	if err == nil {
		t.Fatal("a reset answer was read")
	}
	if !AnswerLost(err) {
		t.Errorf("AnswerLost(%q) = false", err)
	}
	got := redact(err).Error()
	if !strings.HasPrefix(got, "the connection failed while the answer was read: ") || strings.Contains(got, "secret-sauce") {
		t.Errorf("redact = %q", got)
	}
}

package measure

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		method, url, contentType string
		verb, resource, ns, name string
		dryRun                   bool
	}{
		{"GET", "/version", "", "discovery", "/version", "", "", false},
		{"GET", "/apis/rbac.authorization.k8s.io/v1", "", "discovery", "/apis/rbac.authorization.k8s.io/v1", "", "", false},
		{"GET", "/api/v1/namespaces/bench-target", "", "get", "namespaces", "", "bench-target", false},
		{"GET", "/api/v1/namespaces?labelSelector=a%3Db&limit=500", "", "list", "namespaces", "", "", false},
		{"GET", "/api/v1/namespaces/ns/configmaps?limit=500", "", "list", "configmaps", "ns", "", false},
		{"GET", "/api/v1/configmaps?watch=true&allowWatchBookmarks=true", "", "watch", "configmaps", "", "", false},
		{"GET", "/api/v1/namespaces/ns/configmaps/c1", "", "get", "configmaps", "ns", "c1", false},
		{"PATCH", "/api/v1/namespaces/ns/configmaps/c1?fieldManager=holdfast&force=true", "application/apply-patch+yaml", "patch (apply)", "configmaps", "ns", "c1", false},
		{"PATCH", "/apis/holdfast.dev/v1alpha1/namespaces/h/clusterservicestatuses/x/status", "application/merge-patch+json", "patch", "clusterservicestatuses/status", "h", "x", false},
		{"POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "application/json", "create", "selfsubjectreviews", "", "", false},
		{"DELETE", "/api/v1/namespaces/ns/secrets/s?dryRun=All", "", "delete", "secrets", "ns", "s", true},
		{"PUT", "/api/v1/namespaces/ns/finalize", "", "update", "namespaces/finalize", "", "ns", false},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		r := Classify(tc.method, u, tc.contentType)
		if r.Verb != tc.verb || r.Resource != tc.resource || r.Namespace != tc.ns || r.Name != tc.name || r.DryRun != tc.dryRun {
			t.Errorf("%s %s: got verb %q resource %q ns %q name %q dryRun %v", tc.method, tc.url, r.Verb, r.Resource, r.Namespace, r.Name, r.DryRun)
		}
	}
}

func TestRequestCounterBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 1000)))
	}))
	defer srv.Close()
	c := NewRequestCounter()
	hc := &http.Client{Transport: c.Wrap("hub", http.DefaultTransport)}
	for _, m := range []string{http.MethodGet, http.MethodPatch} {
		req, err := http.NewRequest(m, srv.URL+"/api/v1/namespaces/ns/configmaps/c1", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	rc := c.Reset()
	if got := rc.BytesRead["hub"]["get"]; got != 1000 {
		t.Errorf("bytes read by the GET = %d, want 1000", got)
	}
	if got := Bytes(rc.BytesRead, "hub"); got != 2000 {
		t.Errorf("bytes read = %d, want 2000", got)
	}
	if got := Bytes(rc.BytesSent, "hub"); got != 4 {
		t.Errorf("bytes sent = %d, want 4 (two bodies of 2)", got)
	}
	if rc := c.Reset(); Bytes(rc.BytesRead, "hub") != 0 {
		t.Errorf("a new window starts with bytes read %d", Bytes(rc.BytesRead, "hub"))
	}
}

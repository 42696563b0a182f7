package fleet

import (
	"net/http"
	"net/url"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestWatchedResource(t *testing.T) {
	cases := []struct {
		method, url, want string
	}{
		{"GET", "/api/v1/namespaces/demo/configmaps?labelSelector=a%3Db&watch=true&resourceVersion=5", "v1/configmaps"},
		{"GET", "/apis/apps/v1/deployments?watch=1", "apps/v1/deployments"},
		{"GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/demo/roles?watch=true&sendInitialEvents=true", "rbac.authorization.k8s.io/v1/roles"},
		{"GET", "/api/v1/namespaces?watch=true", "v1/namespaces"},
		{"GET", "/api/v1/namespaces/demo/configmaps?labelSelector=a%3Db", ""},
		{"GET", "/api/v1/namespaces/demo/configmaps/web", ""},
		{"GET", "/version", ""},
		{"POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews?watch=true", ""},
	}
	for _, c := range cases {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := watchedResource(&http.Request{Method: c.method, URL: u})
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s %s: %q, %v; want %q", c.method, c.url, got, ok, c.want)
		}
	}
}

type okTransport struct{}

func (okTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

func TestWatchCounter(t *testing.T) {
	r := NewRegistry(Options{})
	defer r.Close()
	c1, c2 := types.NamespacedName{Namespace: "fleet", Name: "c1"}, types.NamespacedName{Namespace: "fleet", Name: "c2"}
	var hooked []string
	transport := func(cluster types.NamespacedName) http.RoundTripper {
		return &watchCounter{cluster: cluster, counts: &r.watches, next: okTransport{},
			onWatch: func(c types.NamespacedName, res string) { hooked = append(hooked, c.Name+" "+res) }}
	}
	send := func(cluster types.NamespacedName, rawURL string) {
		req, err := http.NewRequest(http.MethodGet, "https://target"+rawURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := transport(cluster).RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	send(c1, "/api/v1/namespaces/demo/configmaps?watch=true")
	send(c1, "/api/v1/namespaces/demo/configmaps?watch=true&resourceVersion=9") // a restart
	send(c1, "/api/v1/namespaces/demo/configmaps")                              // a list
	send(c2, "/apis/apps/v1/deployments?watch=true")
	if got := r.WatchRequests(c1); len(got) != 1 || got["v1/configmaps"] != 2 {
		t.Fatalf("cluster c1: %v, want 2 watches of v1/configmaps", got)
	}
	if got := r.WatchRequests(c2); len(got) != 1 || got["apps/v1/deployments"] != 1 {
		t.Fatalf("cluster c2: %v, want 1 watch of apps/v1/deployments", got)
	}
	if len(hooked) != 3 || hooked[2] != "c2 apps/v1/deployments" {
		t.Fatalf("OnWatch calls %q", hooked)
	}
}

package measure

import (
	"net/url"
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

package fleet

import (
	"maps"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// WatchRequests returns how many watch requests were sent to cluster so far, by resource
// ("v1/configmaps", "apps/v1/deployments"), over every connection the registry made to it. An
// informer sends one when it starts and one each time its watch ends and it watches again: more
// than one per resource means watches were restarted (expired, broken or timed out by the API
// server, which ends each watch after a few minutes).
func (r *Registry) WatchRequests(cluster types.NamespacedName) map[string]int64 {
	return r.watches.of(cluster)
}

type watchCounts struct {
	mu sync.Mutex
	n  map[types.NamespacedName]map[string]int64
}

func (w *watchCounts) add(cluster types.NamespacedName, resource string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		w.n = map[types.NamespacedName]map[string]int64{}
	}
	if w.n[cluster] == nil {
		w.n[cluster] = map[string]int64{}
	}
	w.n[cluster][resource]++
}

func (w *watchCounts) of(cluster types.NamespacedName) map[string]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.n[cluster])
}

// watchCounter counts the watch requests passing through a target cluster's transport.
type watchCounter struct {
	cluster types.NamespacedName
	counts  *watchCounts
	onWatch func(cluster types.NamespacedName, resource string)
	next    http.RoundTripper
}

func (t *watchCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if resource, ok := watchedResource(req); ok {
		t.counts.add(t.cluster, resource)
		if t.onWatch != nil {
			t.onWatch(t.cluster, resource)
		}
	}
	return t.next.RoundTrip(req)
}

// WrappedRoundTripper lets client-go find the transport under this one.
func (t *watchCounter) WrappedRoundTripper() http.RoundTripper { return t.next }

// watchedResource returns the resource a request watches, as "version/resource" for the core
// group and "group/version/resource" otherwise, if it is a watch (a GET with watch=true).
func watchedResource(req *http.Request) (string, bool) {
	if !isWatch(req) {
		return "", false
	}
	segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var gv, rest []string
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		gv, rest = segs[1:2], segs[2:] // /api/v1/...
	case len(segs) >= 4 && segs[0] == "apis":
		gv, rest = segs[1:3], segs[3:] // /apis/group/version/...
	default:
		return "", false
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:] // a namespaced resource; /namespaces/<name> alone watches Namespaces
	}
	if len(rest) == 0 {
		return "", false
	}
	return strings.Join(append(gv, rest[0]), "/"), true
}

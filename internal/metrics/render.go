package metrics

import "github.com/prometheus/client_golang/prometheus"

// Results of a rendering a full reconcile needed, the values of
// holdfast_render_cache_requests_total's result label.
const (
	// RenderHit: the service's inputs were those of its last rendering in this process, which
	// was taken from memory; nothing was rendered.
	RenderHit = "hit"
	// RenderKept: a Helm service's rendering was read back from the hub, where it is kept
	// (package rendercache); nothing was rendered.
	RenderKept = "kept"
	// RenderMiss: the service was rendered.
	RenderMiss = "miss"
)

var renderCacheRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "holdfast_render_cache_requests_total",
	Help: "Renderings of a service a full reconcile needed, by result: hit (its inputs unchanged, taken from memory), kept (a Helm rendering read back from the hub), miss (rendered).",
}, []string{"result"})

// RenderCacheRequest counts one rendering a full reconcile needed; result is RenderHit,
// RenderKept or RenderMiss.
func RenderCacheRequest(result string) {
	renderCacheRequests.WithLabelValues(result).Inc()
}

package metrics

import "testing"

func TestRenderCacheRequests(t *testing.T) {
	for _, result := range []string{RenderHit, RenderKept, RenderMiss} {
		labels := map[string]string{"result": result}
		before, _ := value(t, "holdfast_render_cache_requests_total", labels)
		RenderCacheRequest(result)
		if got := mustValue(t, "holdfast_render_cache_requests_total", labels) - before; got != 1 {
			t.Errorf("holdfast_render_cache_requests_total{result=%q} moved by %v after one request, want 1", result, got)
		}
	}
}

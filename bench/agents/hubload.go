package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"

	"holdfast.dev/holdfast/internal/measure"
)

// served is what the hub API server counted (apiserver_request_total), by "VERB resource"
// (with its subresource after a slash): every client's requests, the controller's and, in Pull
// mode, the agents'.
type served map[string]float64

// scrapeServed reads the hub API server's request counters from its /metrics.
func scrapeServed(ctx context.Context, cs kubernetes.Interface) (served, error) {
	out, _, err := scrapeHub(ctx, cs)
	return out, err
}

// latency is the time an API server took to serve requests of one kind: their count and the
// sum of their durations.
type latency struct{ n, seconds float64 }

// scrapeHub reads, from one read of the hub API server's /metrics, its request counters
// (apiserver_request_total) and durations (apiserver_request_duration_seconds), both by
// "VERB resource".
func scrapeHub(ctx context.Context, cs kubernetes.Interface) (served, map[string]latency, error) {
	out, latencies := served{}, map[string]latency{}
	err := scrapeRequests(ctx, cs, map[string]func(string, *dto.Metric){
		"apiserver_request_total": func(key string, m *dto.Metric) { out[key] += m.GetCounter().GetValue() },
		"apiserver_request_duration_seconds": func(key string, m *dto.Metric) {
			l := latencies[key]
			l.n += float64(m.GetHistogram().GetSampleCount())
			l.seconds += m.GetHistogram().GetSampleSum()
			latencies[key] = l
		},
	})
	return out, latencies, err
}

// scrapeRequests reads the API server's /metrics once and calls, for each family named in add,
// its function with each metric of it and its "VERB resource" (with its subresource after a
// slash; a non-resource request has its path there).
func scrapeRequests(ctx context.Context, cs kubernetes.Interface, add map[string]func(key string, m *dto.Metric)) error {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("reading the API server's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("parsing the API server's metrics: %w", err)
	}
	for family, addOne := range add {
		for _, m := range families[family].GetMetric() {
			resource := labelOf(m, "resource")
			if sub := labelOf(m, "subresource"); sub != "" {
				resource += "/" + sub
			}
			addOne(labelOf(m, "verb")+" "+resource, m)
		}
	}
	return nil
}

// slowest lists the mean durations of the kinds of request in after (minus before) that took
// the most time in all, at most n of them.
func slowest(before, after map[string]latency, n int) string {
	type kind struct {
		key string
		latency
	}
	var kinds []kind
	for k, l := range after {
		b := before[k]
		if d := (latency{l.n - b.n, l.seconds - b.seconds}); d.n > 0 && !strings.HasPrefix(k, "WATCH") {
			kinds = append(kinds, kind{k, d})
		}
	}
	slices.SortFunc(kinds, func(a, b kind) int { return cmp.Compare(b.seconds, a.seconds) })
	var parts []string
	for _, k := range kinds[:min(n, len(kinds))] {
		parts = append(parts, fmt.Sprintf("%s %.0f × %.1f ms", k.key, k.n, 1000*k.seconds/k.n))
	}
	return strings.Join(parts, ", ")
}

// scrapeTargets reads the request counters of every target API server, in order.
func (b *bench) scrapeTargets(ctx context.Context) ([]served, error) {
	var out []served
	for _, cs := range b.Clientsets {
		s, err := scrapeServed(ctx, cs)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// minusEachOf is what every target served from o to s, added up.
func minusEachOf(s, o []served) served {
	sum := served{}
	for i := range s {
		for k, v := range s[i].minus(o[i]) {
			sum[k] += v
		}
	}
	return sum
}

// minus is what was served from o to s, without the scrapes themselves.
func (s served) minus(o served) served {
	out := served{}
	for k, v := range s {
		if d := v - o[k]; d > 0 {
			out[k] = d
		}
	}
	// The scrape that ends the window is counted, under its path.
	if out["GET /metrics"]--; out["GET /metrics"] <= 0 {
		delete(out, "GET /metrics")
	}
	return out
}

// total is the number of requests served.
func (s served) total() float64 {
	var t float64
	for _, v := range s {
		t += v
	}
	return t
}

// writes is the number of requests served that change something (every verb but GET, LIST and
// WATCH).
func (s served) writes() float64 {
	var t float64
	for k, v := range s {
		switch verb, _, _ := strings.Cut(k, " "); verb {
		case "GET", "LIST", "WATCH":
		default:
			t += v
		}
	}
	return t
}

// String is the largest kinds of request first, each with its count: "GET leases 120, ...".
func (s served) String() string {
	keys := slices.Collect(maps.Keys(s))
	slices.SortFunc(keys, func(a, b string) int {
		if s[a] != s[b] {
			if s[a] > s[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, s[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// sentTo is what the hub controller sent to server in rc, by "VERB resource", for the report
// beside what the API server served to every client.
func sentTo(rc measure.RequestCounts, server string) served {
	out := served{}
	for k, n := range rc.Requests[server] {
		out[k.Verb+" "+k.Resource] += float64(n)
	}
	return out
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// served is what the hub API server counted (apiserver_request_total), by "VERB resource"
// (with its subresource after a slash): every client's requests, the controller's and, in Pull
// mode, the agents'.
type served map[string]float64

// scrapeServed reads the hub API server's request counters from its /metrics.
func scrapeServed(ctx context.Context, cs kubernetes.Interface) (served, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the hub API server's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parsing the hub API server's metrics: %w", err)
	}
	out := served{}
	fam, ok := families["apiserver_request_total"]
	if !ok {
		return out, nil
	}
	for _, m := range fam.GetMetric() {
		var verb, resource, sub string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "verb":
				verb = l.GetValue()
			case "resource":
				resource = l.GetValue()
			case "subresource":
				sub = l.GetValue()
			}
		}
		if sub != "" {
			resource += "/" + sub // a non-resource request has its path here
		}
		out[verb+" "+resource] += m.GetCounter().GetValue()
	}
	return out, nil
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

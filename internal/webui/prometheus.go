package webui

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"holdfast.dev/holdfast/internal/fleetview"
)

// PromQL of the charts, over the controller's own metrics (docs/metrics.md).
const (
	// queryLatencyBuckets: corrections per latency bucket over the charts' window.
	queryLatencyBuckets = `sum by (le) (increase(holdfast_drift_correction_seconds_bucket[%dh]))`
	// queryLatencyQuantile: a quantile of the correction latency over the window.
	queryLatencyQuantile = `histogram_quantile(%g, sum by (le) (rate(holdfast_drift_correction_seconds_bucket[%dh])))`
	// queryDriftsPerHour: drifts detected across the fleet in each hour.
	queryDriftsPerHour = `sum(increase(holdfast_drifts_detected_total[1h]))`
	// promTimeout bounds the queries of one page.
	promTimeout = 5 * time.Second
)

// prometheus reads the charts from a Prometheus server that scrapes the controller: the whole
// fleet's corrections since the window began, where the status objects keep only their newest
// records.
type prometheus struct {
	url string
	api promv1.API
}

// WithPrometheus draws the charts from the Prometheus server at url (its HTTP API), falling
// back to the drift records on the hub when it cannot be queried.
func WithPrometheus(url string) Option {
	return func(s *Server) {
		if url == "" {
			return
		}
		c, err := api.NewClient(api.Config{Address: url})
		if err != nil {
			s.promErr = fmt.Errorf("the Prometheus address %q: %w", url, err)
			return
		}
		s.prometheus = &prometheus{url: url, api: promv1.NewAPI(c)}
	}
}

// charts queries the charts' numbers as of now.
func (p *prometheus) charts(ctx context.Context, now time.Time) (chartsPage, error) {
	ctx, cancel := context.WithTimeout(ctx, promTimeout)
	defer cancel()
	page := chartsPage{Source: fmt.Sprintf("the controller's metrics in Prometheus at %s (the last %d hours)", p.url, perHourWindow)}

	v, _, err := p.api.Query(ctx, fmt.Sprintf(queryLatencyBuckets, perHourWindow), now)
	if err != nil {
		return page, fmt.Errorf("querying Prometheus at %s: %w", p.url, err)
	}
	cumulative := map[float64]float64{}
	vec, _ := v.(model.Vector)
	for _, s := range vec {
		le, err := strconv.ParseFloat(string(s.Metric["le"]), 64)
		if err != nil {
			continue
		}
		cumulative[le] = float64(s.Value)
	}
	counts := make([]int, len(latencyBuckets)+1)
	prev := 0.0
	for i, b := range append(append([]float64{}, latencyBuckets...), math.Inf(1)) {
		c := cumulative[b]
		counts[i] = int(math.Round(max(c-prev, 0)))
		prev = max(prev, c)
	}
	page.Corrected = int(math.Round(prev))
	page.Latency = drawBars(latencyTitle, latencyDescription, latencyLabels(), counts)
	if page.Corrected > 0 {
		for q, out := range map[float64]*string{0.5: &page.Median, 0.99: &page.P99} {
			v, _, err := p.api.Query(ctx, fmt.Sprintf(queryLatencyQuantile, q, perHourWindow), now)
			if vec, ok := v.(model.Vector); err == nil && ok && len(vec) == 1 && !math.IsNaN(float64(vec[0].Value)) {
				*out = fleetview.Latency(float64(vec[0].Value))
			}
		}
	}

	start := now.Truncate(time.Hour).Add(-(perHourWindow - 1) * time.Hour)
	m, _, err := p.api.QueryRange(ctx, queryDriftsPerHour, promv1.Range{Start: start.Add(time.Hour), End: start.Add(perHourWindow * time.Hour), Step: time.Hour})
	if err != nil {
		return page, fmt.Errorf("querying Prometheus at %s: %w", p.url, err)
	}
	hours := make([]int, perHourWindow)
	if matrix, ok := m.(model.Matrix); ok {
		for _, series := range matrix {
			for _, pt := range series.Values {
				// The sample at the end of an hour counts that hour's drifts.
				if h := int(pt.Timestamp.Time().Sub(start)/time.Hour) - 1; h >= 0 && h < perHourWindow {
					hours[h] += int(math.Round(float64(pt.Value)))
				}
			}
		}
	}
	page.PerHour = drawBars(perHourTitle, perHourDescription, hourLabels(start), hours)
	return page, nil
}

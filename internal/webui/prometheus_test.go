package webui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// promAPI answers the Prometheus HTTP API's query and query_range as a server scraping a
// controller would: 4 corrections (2 at ≤ 25ms, 1 at ≤ 500ms, 1 above 60s), 3 drifts in the
// hour before now and 2 in the hour before that.
func promAPI(t *testing.T, now time.Time) *httptest.Server {
	cumulative := map[string]int{"0.025": 2, "0.05": 2, "0.5": 3, "60": 3, "+Inf": 4}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		q := r.Form.Get("query")
		var result string
		switch {
		case r.URL.Path == "/api/v1/query" && strings.HasPrefix(q, "sum by (le)"):
			var samples []string
			for _, b := range append(append([]float64{}, latencyBuckets...), 0) {
				le := strconv.FormatFloat(b, 'f', -1, 64)
				if b == 0 {
					le = "+Inf"
				}
				n := 0
				for k, v := range cumulative { // the count of the largest bound at or below le
					kb, _ := strconv.ParseFloat(strings.Replace(k, "+Inf", "1e9", 1), 64)
					lb, _ := strconv.ParseFloat(strings.Replace(le, "+Inf", "1e9", 1), 64)
					if kb <= lb && v > n {
						n = v
					}
				}
				samples = append(samples, fmt.Sprintf(`{"metric":{"le":%q},"value":[%d,"%d"]}`, le, now.Unix(), n))
			}
			result = `{"resultType":"vector","result":[` + strings.Join(samples, ",") + `]}`
		case r.URL.Path == "/api/v1/query" && strings.HasPrefix(q, "histogram_quantile(0.5,"):
			result = fmt.Sprintf(`{"resultType":"vector","result":[{"metric":{},"value":[%d,"0.02"]}]}`, now.Unix())
		case r.URL.Path == "/api/v1/query" && strings.HasPrefix(q, "histogram_quantile(0.99,"):
			result = fmt.Sprintf(`{"resultType":"vector","result":[{"metric":{},"value":[%d,"61"]}]}`, now.Unix())
		case r.URL.Path == "/api/v1/query_range" && q == queryDriftsPerHour:
			end := now.Truncate(time.Hour)
			result = fmt.Sprintf(`{"resultType":"matrix","result":[{"metric":{},"values":[[%d,"2"],[%d,"3"]]}]}`,
				end.Add(-time.Hour).Unix(), end.Unix())
		default:
			t.Errorf("unexpected request %s %q", r.URL.Path, q)
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": json.RawMessage(result)})
	}))
}

func TestChartsFromPrometheus(t *testing.T) {
	now := time.Date(2026, 11, 26, 14, 30, 0, 0, time.UTC)
	srv := promAPI(t, now)
	defer srv.Close()
	s := &Server{}
	WithPrometheus(srv.URL)(s)
	page, err := s.prometheus.charts(t.Context(), now)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, b := range page.Latency.Bars {
		if b.Count > 0 {
			got[b.Label] = b.Count
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(map[string]int{"≤ 25ms": 2, "≤ 500ms": 1, "> 60s": 1}) || page.Corrected != 4 {
		t.Errorf("latency buckets %v (%d corrections), want 2 at ≤ 25ms, 1 at ≤ 500ms, 1 above 60s", got, page.Corrected)
	}
	if page.Median != "20ms" || page.P99 != "61s" {
		t.Errorf("median %s, p99 %s; want 20ms, 61s", page.Median, page.P99)
	}
	hours := map[string]int{}
	for _, b := range page.PerHour.Bars {
		if b.Count > 0 {
			hours[b.Label] = b.Count
		}
	}
	// The sample at 14:00 counts 13:00-14:00; the one at 13:00 counts 12:00-13:00.
	if fmt.Sprint(hours) != fmt.Sprint(map[string]int{"12h": 2, "13h": 3}) {
		t.Errorf("drifts per hour %v, want 2 at 12h and 3 at 13h", hours)
	}
	if !strings.Contains(page.Source, srv.URL) {
		t.Errorf("the source %q does not name the Prometheus server", page.Source)
	}

	srv.Close()
	if _, err := s.prometheus.charts(t.Context(), now); err == nil || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("an unreachable Prometheus: %v, want an error naming it", err)
	}
}

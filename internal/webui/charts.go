package webui

import (
	"fmt"
	"sort"
	"time"

	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/metrics"
)

// latencyBuckets are the upper bounds, in seconds, of the correction latency histogram: those
// of the controller's holdfast_drift_correction_seconds, so both sources draw alike.
var latencyBuckets = metrics.LatencyBuckets

// perHourWindow is how many hours the drifts-per-hour chart covers, up to now.
const perHourWindow = 24

// Chart geometry, in SVG user units.
const (
	chartWidth  = 720
	chartHeight = 220
	chartBottom = 30 // room for the axis labels
	chartTop    = 20 // room for the counts above the bars
)

// chartsPage is the charts view.
type chartsPage struct {
	// Source says where the numbers come from.
	Source  string
	Latency barChart
	PerHour barChart
	// Corrected counts the corrections drawn; Median and P99 their latency ("" when none).
	Corrected   int
	Median, P99 string
}

// barChart is a bar chart drawn as SVG; Table holds the same numbers for screen readers and
// for anyone who would rather read them.
type barChart struct {
	Title, Description string
	Width, Height      int
	Baseline           int
	Bars               []bar
}

// bar is one bar and its label, placed.
type bar struct {
	Label         string
	Count         int
	X, Y, W, H    int
	LabelX, TextY int
	LabelY        int
}

// Empty reports whether every bar is zero.
func (c barChart) Empty() bool {
	for _, b := range c.Bars {
		if b.Count > 0 {
			return false
		}
	}
	return true
}

// buildCharts draws the charts from the drift history the status objects keep (each keeps its
// newest records, so old or busy fleets show the recent past only; Source says so).
func buildCharts(history []fleetview.DriftHistoryEntry, now time.Time) chartsPage {
	page := chartsPage{Source: fmt.Sprintf("the drift records kept in the hub's status objects (%d records; each status object keeps only its newest)", len(history))}
	var latencies []float64
	counts := make([]int, len(latencyBuckets)+1)
	hours := make([]int, perHourWindow)
	start := now.Truncate(time.Hour).Add(-(perHourWindow - 1) * time.Hour)
	for _, e := range history {
		if h := int(e.Drift.DetectedTime.Sub(start) / time.Hour); e.Drift.DetectedTime.After(start) && h < perHourWindow {
			hours[h]++
		}
		if e.Drift.CorrectionLatencySeconds == nil {
			continue
		}
		l := *e.Drift.CorrectionLatencySeconds
		latencies = append(latencies, l)
		i := sort.SearchFloat64s(latencyBuckets, l)
		counts[i]++
	}
	page.Corrected = len(latencies)
	if len(latencies) > 0 {
		sort.Float64s(latencies)
		page.Median = fleetview.Latency(quantile(latencies, 0.5))
		page.P99 = fleetview.Latency(quantile(latencies, 0.99))
	}
	page.Latency = drawBars(latencyTitle, latencyDescription, latencyLabels(), counts)
	page.PerHour = drawBars(perHourTitle, perHourDescription, hourLabels(start), hours)
	return page
}

// The charts' titles and descriptions, whichever source they are drawn from.
const (
	latencyTitle       = "Correction latency"
	latencyDescription = "How long Holdfast took from detecting a drift to putting the object back: corrections per latency bucket."
	perHourTitle       = "Drifts per hour"
	perHourDescription = "Drifts detected in each of the last 24 hours (UTC), across the fleet."
)

// latencyLabels name the latency buckets: "≤ 25ms" ... "> 60s".
func latencyLabels() []string {
	labels := make([]string, len(latencyBuckets)+1)
	for i, b := range latencyBuckets {
		labels[i] = "≤ " + fleetview.Latency(b)
	}
	labels[len(labels)-1] = "> " + fleetview.Latency(latencyBuckets[len(latencyBuckets)-1])
	return labels
}

// hourLabels name the perHourWindow hours from start: "13h".
func hourLabels(start time.Time) []string {
	labels := make([]string, perHourWindow)
	for i := range labels {
		labels[i] = start.Add(time.Duration(i) * time.Hour).UTC().Format("15h")
	}
	return labels
}

// quantile of sorted values, nearest rank.
func quantile(sorted []float64, q float64) float64 {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// drawBars places one bar per count, scaled to the largest.
func drawBars(title, desc string, labels []string, counts []int) barChart {
	c := barChart{Title: title, Description: desc, Width: chartWidth, Height: chartHeight, Baseline: chartHeight - chartBottom}
	top := 1
	for _, n := range counts {
		top = max(top, n)
	}
	slot := chartWidth / len(counts)
	for i, n := range counts {
		h := n * (c.Baseline - chartTop) / top
		x := i * slot
		c.Bars = append(c.Bars, bar{Label: labels[i], Count: n, X: x + slot/8, Y: c.Baseline - h, W: slot * 3 / 4, H: h,
			LabelX: x + slot/2, TextY: c.Baseline - h - 4, LabelY: chartHeight - 10})
	}
	return c
}

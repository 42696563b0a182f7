package measure

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0 < p <= 100) of samples by the nearest-rank method:
// the smallest sample such that at least p% of the samples are less than or equal to it. With
// fewer than 100/(100-p) samples the top percentiles are the maximum (p99 of 54 samples is the
// largest one). It returns 0 for no samples.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// Millis formats a duration in milliseconds with one decimal.
func Millis(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// LatencyHeader is the header of a latency table whose first column is named first: n, min, p50,
// p90, p99, max (see LatencyCells).
func LatencyHeader(first string) []string {
	return []string{first, "n", "min", "p50", "p90", "p99", "max"}
}

// LatencyCells are the cells of a latency row: the number of samples, their minimum, p50, p90,
// p99 and maximum in milliseconds (blank for no samples).
func LatencyCells(ds []time.Duration) []string {
	if len(ds) == 0 {
		return []string{"0", "", "", "", "", ""}
	}
	return []string{fmt.Sprint(len(ds)), Millis(slices.Min(ds)), Millis(Percentile(ds, 50)),
		Millis(Percentile(ds, 90)), Millis(Percentile(ds, 99)), Millis(slices.Max(ds))}
}

// LatencyRow appends a row of label and LatencyCells to a table headed by LatencyHeader.
func (t *Table) LatencyRow(label string, ds []time.Duration) {
	t.Row(append([]string{label}, LatencyCells(ds)...)...)
}

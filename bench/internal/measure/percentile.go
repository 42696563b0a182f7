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

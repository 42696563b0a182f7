package measure

import (
	"testing"
	"time"
)

func TestRatio(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"durations", Ratio(1500*time.Millisecond, time.Second), "1.50×"},
		{"rounded to two places", Ratio(2*time.Second, 3*time.Second), "0.67×"},
		{"floats", Ratio(3.3, 1.1), "3.00×"},
		{"no ideal", Ratio(time.Second, 0), "–"},
		{"no baseline", Ratio(2.0, 0), "–"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: Ratio = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

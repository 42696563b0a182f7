package notify

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	marker := len(truncatedMarker) // in bytes
	cases := []struct {
		name string
		in   string
		max  int
		size func(rune) int
		want string
	}{
		{"within the limit", "héllo", 6, bytesOf, "héllo"},
		{"cut between two-byte characters", strings.Repeat("é", 20), marker + 5, bytesOf, "éé" + truncatedMarker},
		{"cut in UTF-16 units", strings.Repeat("🛡", 20), 13 + 5, charactersOf, "🛡🛡" + truncatedMarker},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := truncate(c.in, c.max, c.size)
			if got != c.want || !utf8.ValidString(got) {
				t.Errorf("truncate = %q, want %q", got, c.want)
			}
		})
	}
}

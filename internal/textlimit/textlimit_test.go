package textlimit

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s, mark string
		max     int
		want    string
	}{
		{"short", "…", 10, "short"},
		{"exactly10!", "…", 10, "exactly10!"},
		{"abcdefghijk", "…", 10, "abcdefg…"},
		{"ab€cd", "…", 6, "ab…"}, // "ab€" and the mark would be 8 bytes: the rune is not split
		{"abcdef", " …(truncated)", 4, " …"},
		{"abcdef", " …(truncated)", 3, " "},
	} {
		got := Cut(tc.s, tc.max, tc.mark)
		if got != tc.want {
			t.Errorf("Cut(%q, %d, %q) = %q, want %q", tc.s, tc.max, tc.mark, got, tc.want)
		}
		if len(got) > tc.max && len(tc.s) > tc.max {
			t.Errorf("Cut(%q, %d) = %d bytes, over the bound", tc.s, tc.max, len(got))
		}
	}
	long := strings.Repeat("é", 1000)
	for max := 4; max < 40; max++ {
		if got := Cut(long, max, "…"); !utf8.ValidString(got) || len(got) > max {
			t.Fatalf("Cut(é×1000, %d) = %q: not valid UTF-8 within the bound", max, got)
		}
	}
}

// Package textlimit bounds text that Holdfast writes where space is limited (status fields,
// Event notes, condition messages): one rule for where a cut falls and how it shows.
package textlimit

import "unicode/utf8"

// Cut returns s when it holds at most max bytes; otherwise its longest prefix that, followed by
// mark, holds at most max bytes and ends on a rune boundary, followed by mark. A max too small
// for mark returns as much of mark as fits.
func Cut(s string, max int, mark string) string {
	if len(s) <= max {
		return s
	}
	if keep := max - len(mark); keep >= 0 {
		return s[:runeStart(s, keep)] + mark
	}
	return mark[:runeStart(mark, max)]
}

// runeStart is the greatest i ≤ n at which a rune of s starts (n < len(s)).
func runeStart(s string, n int) int {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

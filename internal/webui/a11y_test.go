package webui

import (
	"io/fs"
	"math"
	"regexp"
	"strconv"
	"testing"
)

// TestContrast: every text colour of the style sheet on the background it is used with meets
// WCAG 2 AA for normal text (4.5:1), state badges included.
func TestContrast(t *testing.T) {
	css, err := fs.ReadFile(assets, "static/style.css")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`--([a-z-]+):\s*(#[0-9a-f]{6})`).FindAllStringSubmatch(string(css), -1) {
		vars[m[1]] = m[2]
	}
	pairs := [][2]string{
		{"fg", "bg"}, {"muted", "bg"}, {"accent", "bg"}, {"ok-fg", "ok-bg"}, {"bad-fg", "bad-bg"},
		{"warn-fg", "warn-bg"}, {"info-fg", "info-bg"}, {"none-fg", "none-bg"}, {"muted", "none-bg"},
	}
	for _, p := range pairs {
		fg, bg := vars[p[0]], vars[p[1]]
		if fg == "" || bg == "" {
			t.Errorf("style.css lacks --%s or --%s", p[0], p[1])
			continue
		}
		if r := contrast(fg, bg); r < 4.5 {
			t.Errorf("--%s %s on --%s %s: contrast %.2f, want at least 4.5", p[0], fg, p[1], bg, r)
		}
	}
}

// contrast is the WCAG 2 contrast ratio of two #rrggbb colours.
func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}

func luminance(hex string) float64 {
	var lum float64
	for i, weight := range []float64{0.2126, 0.7152, 0.0722} {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		c := float64(v) / 255
		if c <= 0.03928 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		lum += weight * c
	}
	return lum
}

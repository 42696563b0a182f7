package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// pollInterval is how often WaitText reads the node: the precision of the time it returns.
const pollInterval = 20 * time.Millisecond

// nodeText is what textOf reads: whether the node exists, and its rendered text.
type nodeText struct {
	Found bool   `json:"found"`
	Text  string `json:"text"`
}

// WaitText waits until the rendered text (innerText) of the first node matching the CSS
// selector contains substring, and returns how long that took. It reads the page anew each
// time, so it works across reloads and with nodes that appear later. It fails after timeout,
// saying what the node held last.
func WaitText(ctx context.Context, selector, substring string, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	expr, err := textOf(selector)
	if err != nil {
		return 0, err
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last nodeText
	var lastErr error
	for {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[nodeText](expr))
		switch {
		case err == nil && got.Found && strings.Contains(got.Text, substring):
			return time.Since(start), nil
		case err == nil:
			last, lastErr = got, nil
		case ctx.Err() == nil:
			lastErr = err // a navigation in flight, say: try again
		}
		select {
		case <-ctx.Done():
			switch {
			case lastErr != nil:
				return time.Since(start), fmt.Errorf("%q: no text %q after %v: %w", selector, substring, timeout, lastErr)
			case !last.Found:
				return time.Since(start), fmt.Errorf("%q: no such node after %v (waiting for the text %q)", selector, timeout, substring)
			}
			return time.Since(start), fmt.Errorf("%q: no text %q after %v; it reads %q", selector, substring, timeout, last.Text)
		case <-tick.C:
		}
	}
}

// textOf is the expression reading the selector's node text.
func textOf(selector string) (string, error) {
	quoted, err := json.Marshal(selector) // a JSON string is a JavaScript string literal
	if err != nil {
		return "", fmt.Errorf("quoting the selector %q: %w", selector, err)
	}
	return fmt.Sprintf(`(() => { const n = document.querySelector(%s); return {found: !!n, text: n ? n.innerText : ""}; })()`, quoted), nil
}

// OuterHTML returns the HTML of the whole document as it is now, scripts' changes included
// (not the values typed into inputs, which are properties, not attributes).
func OuterHTML(ctx context.Context) (string, error) {
	html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil {
		return "", fmt.Errorf("reading the document's HTML: %w", err)
	}
	return html, nil
}

package browser

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
)

// Window and viewport size of every browser: the screenshots' width, and the height of their
// first screen.
const (
	windowWidth  = 1280
	windowHeight = 900
)

// Option changes what New sets up.
type Option func(*options)

type options struct {
	allowPageErrors bool
}

// AllowPageErrors keeps the exceptions and console errors of the pages from failing the test,
// for a test that provokes them on purpose.
func AllowPageErrors() Option {
	return func(o *options) { o.allowPageErrors = true }
}

// New starts a headless Chromium (see Require) with a profile of its own in t.TempDir() and
// returns the chromedp context of its first tab, for chromedp.Run and chromedp.Do. The browser
// stops when t's cleanups run; then every uncaught exception and console.error of its pages is
// reported with t.Errorf, unless AllowPageErrors.
func New(t testing.TB, opts ...Option) context.Context {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	chromium := Require(t)
	profile := t.TempDir() // removed after the browser has stopped (cleanups run last-in first-out)

	allocOpts := AllocatorOptions(chromium, profile)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), allocOpts...)
	errs := &pageErrors{}
	ctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithListener(errs.record))
	ctx = context.WithValue(ctx, pageErrorsKey{}, errs)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		if !o.allowPageErrors {
			errs.report(t)
		}
	})
	// Start the browser now, so that a Chromium that cannot start fails here, naming itself.
	// The window size leaves a smaller viewport in headless mode; the screenshots' width and
	// first screen are the viewport's.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(windowWidth, windowHeight)); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	return ctx
}

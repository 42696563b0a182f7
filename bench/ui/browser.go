package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/testsupport/browser"
)

// navTiming is what the Navigation Timing API says of the page's load, in ms from the start of
// the navigation.
type navTiming struct {
	ResponseStart float64 `json:"responseStart"`
	ResponseEnd   float64 `json:"responseEnd"`
	DOMContent    float64 `json:"domContentLoadedEventEnd"`
	Load          float64 `json:"loadEventEnd"`
}

// navTimingExpr reads the navigation's entry once its load event has ended (null before).
const navTimingExpr = `(() => {
  const e = performance.getEntriesByType('navigation')[0];
  if (!e || e.loadEventEnd <= 0) return null;
  return {responseStart: e.responseStart, responseEnd: e.responseEnd, domContentLoadedEventEnd: e.domContentLoadedEventEnd, loadEventEnd: e.loadEventEnd};
})()`

// snapshotSuffix names the loads of a view's snapshot (startSnapshots).
const snapshotSuffix = " (snapshot)"

// liveExpr is true once the page's event stream is connected.
const liveExpr = `document.body && document.body.dataset.live === 'on'`

// measureBrowser starts a headless Chromium and measures each full view's page load, then the
// load of the same page served from memory (a snapshot: the browser's part alone), then each
// view's live update.
func measureBrowser(ctx context.Context, ui webView, hub client.Client, cfg config) ([]browserView, []liveView, error) {
	url := ui.url
	ctx, cancel := context.WithCancel(ctx) // stops the snapshot server
	defer cancel()
	path, err := browser.Path()
	if err != nil {
		return nil, nil, err
	}
	profile, err := os.MkdirTemp("", "bench-ui-chromium-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(profile)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, browser.AllocatorOptions(path, profile)...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil {
		return nil, nil, fmt.Errorf("starting %s: %w", path, err)
	}
	// The printed URL's token, exchanged for the web view's cookie (sent to the snapshot server's
	// port too, which passes it on).
	if _, err := pageLoad(bctx, ui.signIn, cfg.timeout); err != nil {
		return nil, nil, fmt.Errorf("opening the printed URL: %w", err)
	}

	loads := map[string][]navTiming{}
	for range cfg.rounds {
		for _, v := range liveViews {
			t, err := pageLoad(bctx, url+v, cfg.timeout)
			if err != nil {
				return nil, nil, fmt.Errorf("loading %s: %w", v, err)
			}
			loads[v] = append(loads[v], t)
		}
	}
	snapshots, err := startSnapshots(ctx, ui.client, url, liveViews)
	if err != nil {
		return nil, nil, err
	}
	for range cfg.rounds {
		for _, v := range liveViews {
			t, err := pageLoad(bctx, snapshots+snapshotPrefix+v, cfg.timeout)
			if err != nil {
				return nil, nil, fmt.Errorf("loading the snapshot of %s: %w", v, err)
			}
			loads[v+snapshotSuffix] = append(loads[v+snapshotSuffix], t)
		}
	}
	var out []browserView
	for _, v := range liveViews {
		out = append(out, browserViewOf(v, loads[v]))
	}
	for _, v := range liveViews {
		out = append(out, browserViewOf(v+snapshotSuffix, loads[v+snapshotSuffix]))
	}

	var live []liveView
	change := 0
	for _, v := range liveViews {
		var samples []time.Duration
		for range cfg.rounds {
			d, err := liveUpdate(bctx, url+v, hub, cfg, change, cfg.timeout)
			if err != nil {
				return nil, nil, fmt.Errorf("live update of %s: %w", v, err)
			}
			samples = append(samples, d)
			change++
		}
		live = append(live, liveView{View: v, Latency: statsOf(samples)})
	}
	return out, live, nil
}

// pageLoad navigates to url and returns the navigation's timing once its load event ended.
func pageLoad(ctx context.Context, url string, timeout time.Duration) (navTiming, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return navTiming{}, err
	}
	return chromedp.Run(ctx, chromedp.Poll[navTiming](navTimingExpr, chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
}

// liveUpdate opens url, waits until its event stream is connected, then adds a drift record to
// one status object (the change-th, round robin) and returns the time from just before that
// write until the page said it replaced its data (body[data-updated], Date.now() in the page).
func liveUpdate(ctx context.Context, url string, hub client.Client, cfg config, change int, timeout time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return 0, err
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](liveExpr, chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(timeout))); err != nil {
		return 0, fmt.Errorf("waiting for the event stream: %w", err)
	}
	before, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.updated || ''`))
	if err != nil {
		return 0, err
	}
	css, err := withDrift(ctx, hub, cfg, change)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	if err := hub.Status().Update(ctx, css); err != nil {
		return 0, fmt.Errorf("writing the status of %s: %w", css.Name, err)
	}
	expr := fmt.Sprintf(`(document.body.dataset.updated || '') !== %q && document.body.dataset.updated`, before)
	updated, err := chromedp.Run(ctx, chromedp.Poll[string](expr, chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		return 0, fmt.Errorf("waiting for the page to update: %w", err)
	}
	at, err := strconv.ParseInt(updated, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("body[data-updated] is %q, not a time", updated)
	}
	return time.UnixMilli(at).Sub(t0), nil
}

// withDrift reads the status object of cluster change%clusters in set change%sets and adds a
// corrected drift record to it, dropping the oldest beyond the limit: the change to write.
func withDrift(ctx context.Context, hub client.Client, cfg config, change int) (*holdfastv1.ClusterServiceStatus, error) {
	set, cluster := setName(change%cfg.sets), clusterName(change%cfg.clusters)
	css := &holdfastv1.ClusterServiceStatus{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: namespace, Name: naming.StatusName(set, cluster)}, css); err != nil {
		return nil, fmt.Errorf("reading the status object of %s on %s: %w", set, cluster, err)
	}
	now := time.Now()
	res := css.Status.Resources[change%len(css.Status.Resources)]
	corrected := metav1.NewMicroTime(now.Add(40 * time.Millisecond))
	css.Status.Drifts = append(css.Status.Drifts, holdfastv1.DriftRecord{ResourceRef: res.ResourceRef, Service: res.Service, CorrectedTime: &corrected,
		DriftDetail: holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Manager: "bench-ui", Operation: "Update", DetectedTime: metav1.NewMicroTime(now),
			Detection: holdfastv1.DriftDetectedByWatch, Fields: []holdfastv1.FieldChange{{Path: ".metadata.labels[\"bench\"]", New: fmt.Sprintf(`"%d"`, change)}}}})
	if n := len(css.Status.Drifts); n > holdfastv1.MaxDriftRecords {
		css.Status.Drifts = css.Status.Drifts[n-holdfastv1.MaxDriftRecords:]
	}
	css.Status.DriftCount++
	return css, nil
}

// Command ui measures `holdfast ui` (package internal/webui, issue 16) at the size of a fleet:
// how long its views take to serve and to load in a browser with -clusters (200) clusters' data
// on the hub, and how long a change on the hub takes to reach an open page.
//
// It starts a hub only (internal/sandbox, Holdfast's CRDs; no target, no controller: the data
// is on the hub) and writes on it what the controller would have written for such a fleet:
// -clusters Clusters in namespace holdfast-system (labels env, region and team; Connected and
// Ready), -sets (3) MultiClusterServices (Ready) and for every cluster and set a
// ClusterServiceStatus named and labelled as the controller names and labels it, its status
// written through the status subresource: Ready, Healthy, Drifted and Contested conditions,
// its services with their last apply, 10–20 objects, and 0–20 drift records over the last day
// with field diffs, managers and detected and corrected times (Secrets among them); 4 of 200
// clusters have a drift waiting for a human (action Report) in the first set, 2 a Contested
// object in the second. The data is the same at every run (a seeded generator per pair).
//
// Then it serves the web view (webui.New with the hub's admin config, Serve on 127.0.0.1:0) and
// measures, for each view (/ the fleet, /drift, /charts, and /?partial=1, which is what a page
// fetches on a live update):
//
//   - the server's response time: a plain HTTP GET, whole body read, -rounds (5) times, and the
//     page's size; beside it, the hub reads the views make (the same Lists, through a client
//     with the web view's rate limit), so that the rest is the server's building and rendering;
//   - the page load in headless Chromium (internal/testsupport/browser's binary and flags):
//     from the navigation's start to the end of the load event and of DOMContentLoaded (the
//     Navigation Timing API), -rounds times per view, the first with the browser's cache empty;
//     then the same for a snapshot of each page (its HTML as rendered once, served from memory,
//     the rest passed to the web view): the browser's part alone, what a page would cost if the
//     server answered at once;
//   - the live update: with the view open and its event stream connected, one status object's
//     status gets a drift record more (a status update, as the controller writes it); the time
//     from just before that update is sent until the page set body[data-updated] (the script
//     does so once it replaced its data region), -rounds times per view.
//
// It prints Markdown tables and, with -out (default bench/ui/results), writes the figures as
// JSON there. The goal: a page loads within 1 s with 200 clusters.
//
// -cpu-profile FILE profiles this process (the web view's server and its client of the hub)
// while the server is measured.
//
// Usage: go run ./bench/ui [-clusters 200] [-sets 3] [-rounds 5] [-out bench/ui/results] [-cpu-profile FILE]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/webui"
)

type config struct {
	clusters, sets, rounds int
	out, cpuProfile        string
	timeout                time.Duration
}

// views are the pages measured, by path.
var views = []string{"/", "/drift", "/charts", "/?partial=1"}

// liveViews are the pages whose live update is measured: every full view.
var liveViews = []string{"/", "/drift", "/charts"}

func main() {
	var cfg config
	flag.IntVar(&cfg.clusters, "clusters", 200, "Clusters on the hub")
	flag.IntVar(&cfg.sets, "sets", 3, "MultiClusterServices, each deployed to every cluster")
	flag.IntVar(&cfg.rounds, "rounds", 5, "measurements of each view (server, browser, live update)")
	flag.StringVar(&cfg.out, "out", "bench/ui/results", "directory of the results' JSON file; empty: none")
	flag.StringVar(&cfg.cpuProfile, "cpu-profile", "", "write a CPU profile of this process (the web view's server and its client of the hub) while the server is measured")
	flag.DurationVar(&cfg.timeout, "timeout", 2*time.Minute, "how long one page load or live update may take")
	measure.ParseFlags(measure.AtLeast("clusters", 1), measure.AtLeast("sets", 1), measure.AtLeast("rounds", 1))
	measure.Main(func(ctx context.Context) error { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg config) (err error) {
	res := results{Machine: measure.Machine(), Clusters: cfg.clusters, Sets: cfg.sets, Rounds: cfg.rounds, Start: time.Now().UTC()}
	fmt.Printf("Machine: %s\n\n", res.Machine)

	start := time.Now()
	hubCP, err := sandbox.Start(ctx, sandbox.Options{Name: "hub"})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, hubCP.Stop()) }()
	if err := localfleet.InstallCRDs(ctx, hubCP); err != nil {
		return err
	}
	res.Setup.HubStart = ms(time.Since(start))
	hub, err := adminClient(hubCP.RESTConfig())
	if err != nil {
		return err
	}
	start = time.Now()
	if err := populate(ctx, hub, cfg); err != nil {
		return err
	}
	res.Setup.Populate = ms(time.Since(start))
	if res.Data, err = describeData(ctx, hubCP.RESTConfig()); err != nil {
		return err
	}

	ui, stop, err := serve(ctx, hubCP.RESTConfig())
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintln(os.Stderr, "measuring the server")
	stopProfile, err := measure.StartCPUProfile(cfg.cpuProfile)
	if err != nil {
		return err
	}
	res.Server, err = measureServer(ctx, ui, cfg.rounds)
	if err = errors.Join(err, stopProfile()); err != nil {
		return err
	}
	if res.HubReads, err = measureHubReads(ctx, hubCP.RESTConfig(), cfg.rounds); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "measuring in Chromium")
	if res.Browser, res.Live, err = measureBrowser(ctx, ui, hub, cfg); err != nil {
		return err
	}
	fmt.Print(report(res))
	return writeResults(cfg.out, res)
}

// adminClient is a client of the hub with no rate limit, to write the fleet's data quickly.
func adminClient(cfg *rest.Config) (client.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	scheme, err := controller.Scheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("building the hub client: %w", err)
	}
	return c, nil
}

// webView is the web view being measured: its address, the URL it prints (with the run's token)
// and a client signed in through that URL.
type webView struct {
	url    string
	signIn string
	client *http.Client
}

// serve starts the web view on a loopback port; stop ends it and waits for it.
func serve(ctx context.Context, cfg *rest.Config) (ui webView, stop func(), err error) {
	srv, err := webui.New(cfg, ctrl.Log.WithName("ui"))
	if err != nil {
		return ui, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return ui, nil, fmt.Errorf("listening: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			fmt.Fprintln(os.Stderr, "the web view stopped:", err)
		}
	}()
	stop = func() { cancel(); <-done }
	ui = webView{url: "http://" + ln.Addr().String(), signIn: srv.URLs(ln.Addr())[0]}
	if ui.client, err = signedIn(ctx, ui.signIn); err != nil {
		stop()
		return ui, nil, err
	}
	return ui, stop, nil
}

// signedIn is an HTTP client that opened the printed URL, and so holds the web view's cookie.
func signedIn(ctx context.Context, signIn string) (*http.Client, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Jar: jar}
	if _, err := fetch(ctx, c, signIn, "text/html"); err != nil {
		return nil, fmt.Errorf("signing in to the web view: %w", err)
	}
	return c, nil
}

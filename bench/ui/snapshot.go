package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// snapshotPrefix is where the snapshot server serves a view's page as it was once rendered.
const snapshotPrefix = "/snapshot"

// startSnapshots serves each view's page, read once from the web view at base, from memory
// under snapshotPrefix+view, and passes everything else (the assets, the event stream, the
// data fetches) to the web view: a page load with no server time, the browser's floor. The
// server stops with ctx.
func startSnapshots(ctx context.Context, hc *http.Client, base string, paths []string) (string, error) {
	target, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	pages := map[string][]byte{}
	for _, p := range paths {
		body, err := readPage(ctx, hc, base+p)
		if err != nil {
			return "", err
		}
		pages[snapshotPrefix+p] = body
	}
	// Rewrite with SetURL sends the web view's own Host, which it requires on loopback.
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, FlushInterval: -1}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if page, ok := pages[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write(page)
			return
		}
		proxy.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listening: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	return "http://" + ln.Addr().String(), nil
}

// readPage reads a page's HTML.
func readPage(ctx context.Context, hc *http.Client, u string) ([]byte, error) {
	return fetch(ctx, hc, u, "text/html")
}

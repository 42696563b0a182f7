package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// goal is the bound on a page load with 200 clusters.
const goal = time.Second

// results are a run's figures, as written to the JSON file; times in milliseconds.
type results struct {
	Start    time.Time     `json:"start"`
	Machine  string        `json:"machine"`
	Clusters int           `json:"clusters"`
	Sets     int           `json:"sets"`
	Rounds   int           `json:"rounds"`
	Setup    setup         `json:"setup"`
	Data     dataSize      `json:"data"`
	Server   []serverView  `json:"server"`
	HubReads []hubRead     `json:"hubReads"`
	Browser  []browserView `json:"browser"`
	Live     []liveView    `json:"liveUpdate"`
}

type setup struct {
	HubStart float64 `json:"hubStartMs"`
	Populate float64 `json:"populateMs"`
}

// dataSize is what the hub holds: the status objects, their objects and drift records, and the
// size of one List of them as served.
type dataSize struct {
	Statuses        int   `json:"statuses"`
	Resources       int   `json:"resources"`
	DriftRecords    int   `json:"driftRecords"`
	StatusListBytes int64 `json:"statusListBytes"`
}

type serverView struct {
	View     string `json:"view"`
	Bytes    int64  `json:"bytes"`
	Response stats  `json:"responseMs"`
}

type hubRead struct {
	Read string `json:"read"`
	Time stats  `json:"timeMs"`
}

type browserView struct {
	View          string `json:"view"`
	ResponseStart stats  `json:"responseStartMs"`
	ResponseEnd   stats  `json:"responseEndMs"`
	DOMContent    stats  `json:"domContentLoadedMs"`
	Load          stats  `json:"loadMs"`
	// FirstLoad is the first round's load, with the browser's cache of the assets empty for the
	// first view.
	FirstLoad float64 `json:"firstLoadMs"`
}

type liveView struct {
	View    string `json:"view"`
	Latency stats  `json:"latencyMs"`
}

// stats are samples in ms and their spread.
type stats struct {
	Samples []float64 `json:"samples"`
	Min     float64   `json:"min"`
	Median  float64   `json:"median"`
	P90     float64   `json:"p90"`
	Max     float64   `json:"max"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func statsOf(ds []time.Duration) stats {
	s := stats{Min: ms(slices.Min(ds)), Median: ms(measure.Percentile(ds, 50)), P90: ms(measure.Percentile(ds, 90)), Max: ms(slices.Max(ds))}
	for _, d := range ds {
		s.Samples = append(s.Samples, ms(d))
	}
	return s
}

func browserViewOf(view string, ts []navTiming) browserView {
	of := func(f func(navTiming) float64) stats {
		var ds []time.Duration
		for _, t := range ts {
			ds = append(ds, time.Duration(f(t)*float64(time.Millisecond)))
		}
		return statsOf(ds)
	}
	return browserView{View: view, FirstLoad: ts[0].Load,
		ResponseStart: of(func(t navTiming) float64 { return t.ResponseStart }),
		ResponseEnd:   of(func(t navTiming) float64 { return t.ResponseEnd }),
		DOMContent:    of(func(t navTiming) float64 { return t.DOMContent }),
		Load:          of(func(t navTiming) float64 { return t.Load }),
	}
}

func msCell(v float64) string { return fmt.Sprintf("%.1f ms", v) }

// report is the run as Markdown.
func report(r results) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d Clusters, %d MultiClusterServices, %d ClusterServiceStatuses holding %d objects and %d drift records; one List of the status objects as served: %.2f MiB of JSON. %d round(s).\n\n",
		r.Clusters, r.Sets, r.Data.Statuses, r.Data.Resources, r.Data.DriftRecords, float64(r.Data.StatusListBytes)/(1<<20), r.Rounds)
	fmt.Fprintf(&b, "Setup: hub started with the CRDs in %s, the fleet's data written in %s.\n\n",
		msCell(r.Setup.HubStart), msCell(r.Setup.Populate))

	b.WriteString("Server: a plain HTTP GET, whole body read (median, p90, max of the rounds):\n\n")
	t := measure.NewTable("view", "page size", "median", "p90", "max")
	for _, v := range r.Server {
		t.Row(v.View, fmt.Sprintf("%.1f KiB", float64(v.Bytes)/1024), msCell(v.Response.Median), msCell(v.Response.P90), msCell(v.Response.Max))
	}
	b.WriteString(t.String() + "\n")

	b.WriteString("The hub reads in them, through a client with the web view's rate limit (50/s, burst 100):\n\n")
	t = measure.NewTable("read", "median", "p90", "max")
	for _, h := range r.HubReads {
		t.Row(h.Read, msCell(h.Time.Median), msCell(h.Time.P90), msCell(h.Time.Max))
	}
	b.WriteString(t.String() + "\n")

	b.WriteString("Headless Chromium, from the navigation's start (Navigation Timing API), median (max) of the rounds, and the first round's load (the assets not cached yet for the first view). A snapshot is the same view's page as rendered once, served from memory (assets, events and data fetches still from the web view): the browser's part alone:\n\n")
	t = measure.NewTable("view", "first response byte", "response end", "DOMContentLoaded end", "load event end", "first load")
	for _, v := range r.Browser {
		t.Row(v.View, spreadCell(v.ResponseStart), spreadCell(v.ResponseEnd), spreadCell(v.DOMContent), spreadCell(v.Load), msCell(v.FirstLoad))
	}
	b.WriteString(t.String() + "\n")

	b.WriteString("Live update: from just before a status update of one status object (a drift record more) until the open page had replaced its data region (body[data-updated]):\n\n")
	t = measure.NewTable("view", "median", "p90", "max")
	for _, l := range r.Live {
		t.Row(l.View, msCell(l.Latency.Median), msCell(l.Latency.P90), msCell(l.Latency.Max))
	}
	b.WriteString(t.String() + "\n")

	var worst browserView
	for _, v := range r.Browser {
		if !strings.HasSuffix(v.View, snapshotSuffix) && v.Load.Median >= worst.Load.Median {
			worst = v
		}
	}
	verdict := "met"
	if time.Duration(worst.Load.Median*float64(time.Millisecond)) > goal {
		verdict = "not met"
	}
	fmt.Fprintf(&b, "Goal: a page loads within %v with 200 clusters (issue 16); with %d: slowest view %s, median load %s, max %s: %s.\n",
		goal, r.Clusters, worst.View, msCell(worst.Load.Median), msCell(worst.Load.Max), verdict)
	return b.String()
}

func spreadCell(s stats) string { return fmt.Sprintf("%.1f (%.1f) ms", s.Median, s.Max) }

// writeResults writes the figures as JSON into dir, named after the run's start (UTC) and size.
func writeResults(dir string, r results) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.json", r.Start.Format("2006-01-02-1504"), r.Clusters))
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the results: %w", err)
	}
	fmt.Printf("\nFigures written to %s\n", path)
	return nil
}

package main

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// reconcileTimes are, per controller of the hub controller (this process), its reconciles and
// the time they took, from controller-runtime's metrics, and the time the status controller's
// requests waited in its queue (holdfast_queue_wait_seconds): where the hub's part of a change
// goes.
type reconcileTimes map[string]*reconcileTime

type reconcileTime struct {
	count     uint64
	busy      time.Duration
	waits     uint64
	waited    time.Duration
	byTrigger map[string]float64
	// byResult counts the reconciles by how they ended (controller-runtime's result label:
	// success, error, requeue, requeue_after).
	byResult map[string]float64
}

// gatherReconcileTimes reads the metrics of this process now.
func gatherReconcileTimes() (reconcileTimes, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return nil, fmt.Errorf("reading the controller's metrics: %w", err)
	}
	return reconcileTimesOf(families), nil
}

// scrapeReconcileTimes reads the metrics another process serves at url (the agents',
// serveMetrics).
func scrapeReconcileTimes(ctx context.Context, url string) (reconcileTimes, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the agents' metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the agents' metrics: %w", err)
	}
	return reconcileTimesOf(slices.Collect(maps.Values(families))), nil
}

// serveMetrics serves this process's controller-runtime metrics on a local port, whose address
// it writes to the file path (the agents' process, for scrapeReconcileTimes).
func serveMetrics(ctx context.Context, path string) error {
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return os.WriteFile(path, []byte("http://"+l.Addr().String()+"/metrics"), 0o600)
}

// reconcileTimesOf reads the reconcile times of families.
func reconcileTimesOf(families []*dto.MetricFamily) reconcileTimes {
	out := reconcileTimes{}
	of := func(c string) *reconcileTime {
		if out[c] == nil {
			out[c] = &reconcileTime{byTrigger: map[string]float64{}, byResult: map[string]float64{}}
		}
		return out[c]
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			controller := labelOf(m, "controller")
			switch f.GetName() {
			case "controller_runtime_reconcile_time_seconds":
				h := m.GetHistogram()
				t := of(controller)
				t.count += h.GetSampleCount()
				t.busy += time.Duration(h.GetSampleSum() * float64(time.Second))
			case "holdfast_queue_wait_seconds":
				h := m.GetHistogram()
				t := of(controller)
				t.waits += h.GetSampleCount()
				t.waited += time.Duration(h.GetSampleSum() * float64(time.Second))
			case "holdfast_reconciles_total":
				of(controller).byTrigger[labelOf(m, "trigger")] += m.GetCounter().GetValue()
			case "controller_runtime_reconcile_total":
				of(controller).byResult[labelOf(m, "result")] += m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// minus is what happened between o and r.
func (r reconcileTimes) minus(o reconcileTimes) reconcileTimes {
	out := reconcileTimes{}
	for c, t := range r {
		d := &reconcileTime{count: t.count, busy: t.busy, waits: t.waits, waited: t.waited,
			byTrigger: maps.Clone(t.byTrigger), byResult: maps.Clone(t.byResult)}
		if p := o[c]; p != nil {
			d.count, d.busy, d.waits, d.waited = d.count-p.count, d.busy-p.busy, d.waits-p.waits, d.waited-p.waited
			for k, v := range p.byTrigger {
				d.byTrigger[k] -= v
			}
			for k, v := range p.byResult {
				d.byResult[k] -= v
			}
		}
		if d.count > 0 || d.waits > 0 {
			out[c] = d
		}
	}
	return out
}

// String lists, per controller, its reconciles, their mean time and the time they took in all,
// and for the status controller the mean wait in its queue and what brought the reconciles.
func (r reconcileTimes) String() string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(r)) {
		t := r[c]
		p := fmt.Sprintf("%s: %d reconciles, %s in all", c, t.count, t.busy.Round(time.Millisecond))
		if t.count > 0 {
			p += fmt.Sprintf(", %s each", (t.busy / time.Duration(t.count)).Round(100*time.Microsecond))
		}
		if t.waits > 0 {
			p += fmt.Sprintf("; waited %s each in its queue", (t.waited / time.Duration(t.waits)).Round(time.Millisecond))
		}
		if triggers := counts(t.byTrigger); triggers != "" {
			p += " (brought by: " + triggers + ")"
		}
		if results := counts(t.byResult); results != "" {
			p += " (ended: " + results + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// counts lists the positive counts of m by key: "a 3, b 1".
func counts(m map[string]float64) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if n := m[k]; n > 0 {
			out = append(out, fmt.Sprintf("%s %.0f", k, n))
		}
	}
	return strings.Join(out, ", ")
}

// labelOf is the value of m's label name, "" when it has none.
func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

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
}

// gatherReconcileTimes reads the metrics now.
func gatherReconcileTimes() (reconcileTimes, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return nil, fmt.Errorf("reading the controller's metrics: %w", err)
	}
	out := reconcileTimes{}
	of := func(c string) *reconcileTime {
		if out[c] == nil {
			out[c] = &reconcileTime{byTrigger: map[string]float64{}}
		}
		return out[c]
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var controller, trigger string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "controller":
					controller = l.GetValue()
				case "trigger":
					trigger = l.GetValue()
				}
			}
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
				of(controller).byTrigger[trigger] += m.GetCounter().GetValue()
			}
		}
	}
	return out, nil
}

// minus is what happened between o and r.
func (r reconcileTimes) minus(o reconcileTimes) reconcileTimes {
	out := reconcileTimes{}
	for c, t := range r {
		d := &reconcileTime{count: t.count, busy: t.busy, waits: t.waits, waited: t.waited, byTrigger: maps.Clone(t.byTrigger)}
		if p := o[c]; p != nil {
			d.count, d.busy, d.waits, d.waited = d.count-p.count, d.busy-p.busy, d.waits-p.waits, d.waited-p.waited
			for k, v := range p.byTrigger {
				d.byTrigger[k] -= v
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
		var triggers []string
		for _, k := range slices.Sorted(maps.Keys(t.byTrigger)) {
			if n := t.byTrigger[k]; n > 0 {
				triggers = append(triggers, fmt.Sprintf("%s %.0f", k, n))
			}
		}
		if len(triggers) > 0 {
			p += " (brought by: " + strings.Join(triggers, ", ") + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// rawLine is one line of the -raw file: a drift this program made, a drift record the status
// objects showed, or an informer event of a drifted object on a target. Times are RFC 3339 with
// nanoseconds (wall clock); what the tables compute can be recomputed from them.
type rawLine struct {
	What    string `json:"what"` // drift, record, event
	Cluster string `json:"cluster"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`

	// drift
	Seq       int    `json:"seq,omitempty"`
	Drift     string `json:"drift,omitempty"`
	TSend     string `json:"tSend,omitempty"`
	T0        string `json:"t0,omitempty"`
	RespRV    int64  `json:"respRV,omitempty"`
	Corrected string `json:"corrected,omitempty"`
	Err       string `json:"err,omitempty"`
	// Matched is the detectedTime of the drift's record.
	Matched string `json:"matched,omitempty"`

	// record
	Record    *holdfastv1.DriftRecord `json:"record,omitempty"`
	FirstSeen string                  `json:"firstSeen,omitempty"`
	Used      bool                    `json:"used,omitempty"`
	Before    bool                    `json:"beforeFirstDrift,omitempty"`

	// event
	At       string `json:"at,omitempty"`
	RV       int64  `json:"rv,omitempty"`
	UID      string `json:"uid,omitempty"`
	Deleted  bool   `json:"deleted,omitempty"`
	Declared bool   `json:"declared,omitempty"`
}

func rawTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

// writeRaw writes every drift, every drift record seen and every informer event of the
// drifted objects to path, one JSON object a line, sorted by time within each kind of line.
func (b *bench) writeRaw(path string, runs []*driftRun, pre []*seenRecord) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the raw data: %w", err)
	}
	enc := json.NewEncoder(f)
	var lines []rawLine
	drifted := map[string]bool{}
	for _, d := range runs {
		l := rawLine{What: "drift", Cluster: d.cluster, Kind: d.obj.Kind, Name: d.obj.Name, Seq: d.seq, Drift: d.kind,
			TSend: rawTime(d.tSend), T0: rawTime(d.t0), RespRV: d.respRV, Corrected: rawTime(d.corrected)}
		if d.err != nil {
			l.Err = d.err.Error()
		}
		if d.record != nil {
			l.Matched = rawTime(d.record.DetectedTime.Time)
		}
		lines = append(lines, l)
		drifted[objID(d.cluster, d.obj)] = true
	}
	isPre := map[*seenRecord]bool{}
	for _, r := range pre {
		isPre[r] = true
	}
	for _, r := range b.records.all() {
		lines = append(lines, rawLine{What: "record", Cluster: r.cluster, Kind: r.Kind, Name: r.Name, Record: r.DeepCopy(),
			FirstSeen: rawTime(r.firstSeen), Used: r.used, Before: isPre[r]})
	}
	var events []rawLine
	for _, t := range b.targets {
		t.log.mu.Lock()
		for k, evs := range t.log.events {
			if !drifted[objID(t.name, k)] {
				continue
			}
			for _, ev := range evs {
				events = append(events, rawLine{What: "event", Cluster: t.name, Kind: k.Kind, Name: k.Name, At: rawTime(ev.at),
					RV: ev.rv, UID: string(ev.uid), Deleted: ev.deleted, Declared: ev.declared})
			}
		}
		t.log.mu.Unlock()
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].At < events[j].At })
	lines = append(lines, events...)
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			return errors.Join(fmt.Errorf("writing the raw data: %w", err), f.Close())
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the raw data: %w", err)
	}
	return nil
}

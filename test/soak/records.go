package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// recordKey identifies one drift record across polls: status.drifts keeps only the newest 20, and
// a record gets its correctedTime later.
type recordKey struct {
	statusUID   string
	kind, name  string
	driftType   holdfastv1.DriftType
	detectedMic int64
}

type seenRecord struct {
	cluster   string
	statusUID string
	rec       holdfastv1.DriftRecord
	firstSeen time.Time
	checked   bool // against the corrected check
	explained bool // against the explained check
}

// recordBook collects every drift record of the service set's status objects, polling the hub.
type recordBook struct {
	mu      sync.Mutex
	records map[recordKey]*seenRecord
	// maxCount is the highest status.driftCount seen per status object: records beyond the 20
	// kept may have come and gone between two polls.
	maxCount map[string]int64
	polls    int
	failed   int
	// present holds the records the last successful poll saw.
	present map[recordKey]bool
}

func newRecordBook() *recordBook {
	return &recordBook{records: map[recordKey]*seenRecord{}, maxCount: map[string]int64{}}
}

func (b *recordBook) poll(ctx context.Context, hub client.Client, namespace string) {
	for ctx.Err() == nil {
		b.pollOnce(ctx, hub, namespace)
		sleep(ctx, time.Second)
	}
}

func (b *recordBook) pollOnce(ctx context.Context, hub client.Client, namespace string) {
	list := &holdfastv1.ClusterServiceStatusList{}
	if err := hub.List(ctx, list, client.InNamespace(namespace)); err != nil {
		b.mu.Lock()
		b.failed++
		b.mu.Unlock()
		return
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.polls++
	b.present = map[recordKey]bool{}
	for i := range list.Items {
		css := &list.Items[i]
		if css.Spec.MultiClusterService != serviceSetName {
			continue
		}
		uid := string(css.UID)
		if css.Status.DriftCount > b.maxCount[uid] {
			b.maxCount[uid] = css.Status.DriftCount
		}
		for _, rec := range css.Status.Drifts {
			k := recordKey{uid, rec.Kind, rec.Name, rec.Type, rec.DetectedTime.UnixMicro()}
			b.present[k] = true
			if r, ok := b.records[k]; ok {
				if r.rec.CorrectedTime == nil {
					r.rec = *rec.DeepCopy()
				}
				continue
			}
			b.records[k] = &seenRecord{cluster: css.Spec.Cluster, statusUID: uid, rec: *rec.DeepCopy(), firstSeen: now}
		}
	}
}

// stats summarises what the polls saw.
func (b *recordBook) stats() (seen, corrected int, byDetection map[string]int, total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	byDetection = map[string]int{}
	for _, r := range b.records {
		seen++
		if r.rec.CorrectedTime != nil {
			corrected++
		}
		d := string(r.rec.Detection)
		if d == "" {
			d = string(holdfastv1.DriftDetectedByWatch)
		}
		byDetection[d]++
	}
	for _, n := range b.maxCount {
		total += n
	}
	return seen, corrected, byDetection, total
}

// open returns the records never seen corrected: those the last poll still saw, and those that
// left status.drifts (the newest 20 are kept; a withdrawn cluster's status object is deleted)
// before they were seen corrected.
func (b *recordBook) open() (present, gone []seenRecord) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, r := range b.records {
		if r.rec.CorrectedTime != nil {
			continue
		}
		if b.present[k] {
			present = append(present, *r)
		} else {
			gone = append(gone, *r)
		}
	}
	sort.Slice(present, func(i, j int) bool { return present[i].rec.DetectedTime.Before(&present[j].rec.DetectedTime) })
	sort.Slice(gone, func(i, j int) bool { return gone[i].rec.DetectedTime.Before(&gone[j].rec.DetectedTime) })
	return present, gone
}

// due returns the corrected records not checked yet whose correctedTime is before cutoff, and
// marks them checked.
func (b *recordBook) due(cutoff time.Time) []seenRecord {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []seenRecord
	for _, r := range b.records {
		if r.checked || r.rec.CorrectedTime == nil || !r.rec.CorrectedTime.Time.Before(cutoff) {
			continue
		}
		r.checked = true
		out = append(out, *r)
	}
	return out
}

// detectedBefore returns the records detected before cutoff not yet checked for a cause, and
// marks them checked.
func (b *recordBook) detectedBefore(cutoff time.Time) []seenRecord {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []seenRecord
	for _, r := range b.records {
		if r.explained || !r.rec.DetectedTime.Time.Before(cutoff) {
			continue
		}
		r.explained = true
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rec.DetectedTime.Before(&out[j].rec.DetectedTime) })
	return out
}

// about returns the records of one object on one cluster, by detectedTime.
func (b *recordBook) about(cluster string, r objRef) []seenRecord {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []seenRecord
	for _, rec := range b.records {
		if rec.cluster == cluster && rec.rec.Kind == r.Kind && rec.rec.Name == r.Name &&
			(rec.rec.Namespace == appNamespace || r.Kind == kindNamespace) {
			out = append(out, *rec)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rec.DetectedTime.Before(&out[j].rec.DetectedTime) })
	return out
}

// missedSome says whether a status object of the cluster counted more drifts (status.driftCount)
// than the polls saw records: some left status.drifts (the newest 20) between two polls.
func (b *recordBook) missedSome(cluster string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	seen := map[string]int64{}
	clusterOf := map[string]string{}
	for _, r := range b.records {
		seen[r.statusUID]++
		clusterOf[r.statusUID] = r.cluster
	}
	for uid, n := range b.maxCount {
		if c, ok := clusterOf[uid]; (ok && c != cluster) || seen[uid] >= n {
			continue
		}
		// A status object without a record seen is of an unknown cluster: count it against all.
		return true
	}
	return false
}

func (r seenRecord) String() string {
	s := fmt.Sprintf("%s %s %s/%s %s, detected %s (%s)", r.cluster, r.rec.Type, r.rec.Kind, r.rec.Name, fieldsOf(r.rec), stamp(r.rec.DetectedTime.Time), r.rec.Detection)
	if r.rec.CorrectedTime != nil {
		s += ", corrected " + stamp(r.rec.CorrectedTime.Time)
	}
	if r.rec.Manager != "" {
		s += ", by " + r.rec.Manager
	}
	return s
}

func fieldsOf(rec holdfastv1.DriftRecord) string {
	if len(rec.Fields) == 0 {
		return "[]"
	}
	s := "["
	for i, f := range rec.Fields {
		if i > 0 {
			s += " "
		}
		s += f.Path
	}
	return s + "]"
}

func stamp(t time.Time) string { return t.UTC().Format("15:04:05.000000") }

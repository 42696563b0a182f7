package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// Invariant 3's memory bound: after warmupRounds rounds, whose highest peak is the baseline, no
// round's peak resident set may exceed max(2 × baseline, baseline + memorySlack). A leak (an
// informer per reconcile, a cache of every object version, a goroutine per watch event) grows
// with the faults and crosses it within a 30-minute soak; the ordinary variation of a Go heap
// under load (GC cycles, a burst of list calls after an API server restart) stays below it.
const (
	warmupRounds = 3
	memorySlack  = 150 << 20
)

// rssSample is one reading of the controller's resident set size.
type rssSample struct {
	at    time.Time
	pid   int
	bytes int64
}

// rssSampler reads VmRSS of whichever controller incarnation runs, about once a second, and keeps
// the peak of the current round.
type rssSampler struct {
	mu      sync.Mutex
	peak    rssSample // of the current round; zero when no sample was taken
	samples int       // in the current round
	total   int
	last    rssSample
}

func (m *rssSampler) run(ctx context.Context, pid func() int) {
	for ctx.Err() == nil {
		if p := pid(); p > 0 {
			// The process may be killed between the two calls: a failed read is no sample.
			if b, err := readRSS(p); err == nil {
				m.add(rssSample{at: time.Now(), pid: p, bytes: b})
			}
		}
		sleep(ctx, time.Second)
	}
}

func (m *rssSampler) add(s rssSample) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.samples++
	m.total++
	m.last = s
	if s.bytes > m.peak.bytes {
		m.peak = s
	}
}

// take returns the peak and the number of samples since the last call, and starts a new round.
func (m *rssSampler) take() (rssSample, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, n := m.peak, m.samples
	m.peak, m.samples = rssSample{}, 0
	return p, n
}

func (m *rssSampler) counts() (total int, last rssSample) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total, m.last
}

// readRSS reads VmRSS (in kB) from /proc/<pid>/status.
func readRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected VmRSS line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing VmRSS of pid %d: %w", pid, err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status (a zombie?)", pid)
}

// memoryBound is the highest peak a round may reach after the warm-up.
func memoryBound(baseline int64) int64 { return max(2*baseline, baseline+memorySlack) }

// roundPeak is the peak RSS of one round, as the report lists it.
type roundPeak struct {
	round int
	peak  rssSample
}

// checkMemory ends a round's sampling: the warm-up rounds make the baseline, every later round's
// peak is checked against the bound (inconclusive without a sample in the round).
func (s *soak) checkMemory() {
	peak, n := s.rss.take()
	if n == 0 {
		if s.rounds > warmupRounds {
			s.checks.inconclusive(cMemory)
			s.logFault("memory check inconclusive: round %d: no RSS sample of the controller was taken", s.rounds)
		}
		return
	}
	s.peaks = append(s.peaks, roundPeak{s.rounds, peak})
	if s.rounds <= warmupRounds {
		s.baseline = max(s.baseline, peak.bytes)
		return
	}
	if s.baseline == 0 {
		s.checks.inconclusive(cMemory)
		s.logFault("memory check inconclusive: round %d: no RSS sample in the warm-up rounds, no baseline", s.rounds)
		return
	}
	if bound := memoryBound(s.baseline); peak.bytes > bound {
		s.checks.fail(cMemory)
		s.violation("round %d: the controller's resident set reached %s (pid %d, at %s), above the bound %s = max(2 × baseline, baseline + %s); baseline %s, the highest peak of rounds 1-%d",
			s.rounds, measure.MiB(peak.bytes), peak.pid, stamp(peak.at), measure.MiB(bound), measure.MiB(memorySlack), measure.MiB(s.baseline), warmupRounds)
	} else {
		s.checks.pass(cMemory)
	}
}

// memoryRows adds the RSS rows to the run table: the baseline, the last round's peak, the
// highest round peak and the peak after the last round's checks until the end.
func (s *soak) memoryRows(run *measure.Table) {
	total, last := s.rss.counts()
	row := "controller RSS (VmRSS sampled every second): baseline (highest peak of rounds 1-3) / last round's peak / highest round peak / peak after the last round until the end"
	if len(s.peaks) == 0 {
		run.Row(row, fmt.Sprintf("no sample (%d taken)", total))
		return
	}
	top := s.peaks[0]
	for _, p := range s.peaks {
		if p.peak.bytes > top.peak.bytes {
			top = p
		}
	}
	final := s.peaks[len(s.peaks)-1]
	end := "none"
	if s.endPeak.bytes > 0 {
		end = measure.MiB(s.endPeak.bytes)
	}
	base := "none"
	if s.baseline > 0 {
		base = fmt.Sprintf("%s (bound %s)", measure.MiB(s.baseline), measure.MiB(memoryBound(s.baseline)))
	}
	run.Row(row, fmt.Sprintf("%s / %s (round %d) / %s (round %d) / %s", base, measure.MiB(final.peak.bytes), final.round,
		measure.MiB(top.peak.bytes), top.round, end))
	run.Row("controller RSS samples taken (last one)", fmt.Sprintf("%d (%s at %s)", total, measure.MiB(last.bytes), stamp(last.at)))
}

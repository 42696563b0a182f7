package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// counter counts faults by kind: performed, skipped (preconditions did not hold) and failed
// (the request to do it failed).
type counter struct{ performed, skips, failures map[string]int }

func newCounter() *counter {
	return &counter{performed: map[string]int{}, skips: map[string]int{}, failures: map[string]int{}}
}

func (c *counter) done(kind string)    { c.performed[kind]++ }
func (c *counter) skipped(kind string) { c.skips[kind]++ }
func (c *counter) failed(kind string)  { c.failures[kind]++ }

// checkCounter counts invariant checks by check.
type checkCounter struct{ passed, failed, unsure map[string]int }

func newCheckCounter() *checkCounter {
	return &checkCounter{passed: map[string]int{}, failed: map[string]int{}, unsure: map[string]int{}}
}

func (c *checkCounter) pass(check string)         { c.passed[check]++ }
func (c *checkCounter) fail(check string)         { c.failed[check]++ }
func (c *checkCounter) inconclusive(check string) { c.unsure[check]++ }

// count counts one verdict of check ("pass", "inconclusive" or a failure): an inconclusive one
// is logged to the fault log as unsure says, a failure reported as a violation as violation says.
func (s *soak) count(check, verdict, unsure, violation string) {
	switch verdict {
	case "pass":
		s.checks.pass(check)
	case "inconclusive":
		s.checks.inconclusive(check)
		s.logFault("%s", unsure)
	default:
		s.checks.fail(check)
		s.violation("%s", violation)
	}
}

func (s *soak) report(code string, soakTime time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Code: %s\n\n", code)
	fmt.Fprintf(&b, "Fleet: hub + %d targets with kube-controller-manager; `holdfast controller` as a child process (info logs); "+
		"service set %s (ContinuousWithDriftDetection, fight limit 1000 corrections) with services %s and %s, %d objects per cluster at revision 0\n\n",
		len(s.targets), serviceSetName, configService, webService, len(s.declaredAt(configTemplate, 0))+len(s.declaredAt(webTemplate, 0)))

	run := measure.NewTable("run", "value")
	run.Row("seed", fmt.Sprint(s.cfg.seed))
	run.Row("soak (first fault until the last check)", soakTime.Round(time.Second).String())
	run.Row("rounds (faults, then settle and checks)", fmt.Sprint(s.rounds))
	run.Row("time with faults being injected", s.faultTime.Round(time.Second).String())
	run.Row("controller starts (first one included)", fmt.Sprint(s.ctrl.starts))
	s.memoryRows(run)
	run.Row("template revisions reached (config, web)", fmt.Sprintf("%d, %d", s.revs[configTemplate], s.revs[webTemplate]))
	if len(s.settles) > 0 {
		sp := measure.SpreadOf(s.settles)
		run.Row("settle: faults stopped (and everything up; the correction request in Report mode) until converged, min / median / max",
			fmt.Sprintf("%s / %s / %s", sp.Min.Round(100*time.Millisecond), sp.Median.Round(100*time.Millisecond), sp.Max.Round(100*time.Millisecond)))
	}
	seen, corrected, byDetection, total := s.records.stats()
	var det []string
	for _, k := range sortedKeys(byDetection) {
		det = append(det, fmt.Sprintf("%s %d", k, byDetection[k]))
	}
	run.Row("drift records seen by polling the hub every second (corrected; by detection)", fmt.Sprintf("%d (%d; %s)", seen, corrected, strings.Join(det, ", ")))
	run.Row("status.driftCount summed over the status objects (at their highest)", fmt.Sprint(total))
	present, gone := s.records.open()
	run.Row("records never seen corrected: still listed at the end, uncorrected / gone from status.drifts first", fmt.Sprintf("%d / %d", len(present), len(gone)))
	run.Row("controller log lines read", fmt.Sprint(s.logs.lines))
	b.WriteString(run.String())
	b.WriteString("\n")

	faults := measure.NewTable("fault", "performed", "skipped", "failed")
	totals := [3]int{}
	for _, k := range faultOrder {
		p, sk, f := s.faults.performed[k], s.faults.skips[k], s.faults.failures[k]
		if p+sk+f == 0 {
			continue
		}
		totals[0] += p
		totals[1] += sk
		totals[2] += f
		faults.Row(k, fmt.Sprint(p), fmt.Sprint(sk), fmt.Sprint(f))
	}
	faults.Row("**all**", fmt.Sprint(totals[0]), fmt.Sprint(totals[1]), fmt.Sprint(totals[2]))
	b.WriteString(faults.String())
	b.WriteString("\nSkipped: its preconditions did not hold (no matched target up, the object not there, the hub down, ...). Failed: the request making it failed (e.g. a conflict twice, a target that went down meanwhile); see faults.log.\n\n")

	checks := measure.NewTable("invariant check", "passed", "failed", "inconclusive")
	for _, k := range checkOrder {
		p, f, i := s.checks.passed[k], s.checks.failed[k], s.checks.unsure[k]
		if p+f+i == 0 {
			continue
		}
		cell := fmt.Sprint(f)
		if f > 0 {
			cell = fmt.Sprintf("**%d**", f)
		}
		checks.Row(k, fmt.Sprint(p), cell, fmt.Sprint(i))
	}
	b.WriteString(checks.String())
	b.WriteString("\n")

	if len(present) > 0 {
		fmt.Fprintf(&b, "Drift records still listed without correctedTime at the end, after the last round converged (every object as declared, none drifted by its status entry):\n\n")
		for _, r := range present {
			fmt.Fprintf(&b, "- %s\n", r)
		}
		b.WriteString("\n")
	}
	if len(s.violations) == 0 {
		b.WriteString("Outcome: no invariant violated.\n")
	} else {
		fmt.Fprintf(&b, "Outcome: **%d invariant violations**:\n\n", len(s.violations))
		for i, v := range s.violations {
			fmt.Fprintf(&b, "%d. %s\n", i+1, v)
		}
	}
	fmt.Fprintf(&b, "\nLogs: %s\n", s.logDir)
	return b.String()
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return slices.Clip(keys)
}

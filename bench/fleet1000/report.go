package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// result is what was measured at one size.
type result struct {
	n                           int
	setup, clustersReady        time.Duration
	rollout, change             time.Duration
	rolloutSpread, changeSpread measure.Spread[time.Duration]
	rolloutRequests             measure.RequestCounts
	rolloutCPU, changeCPU       measure.CPUTimes
	// idealRollout and idealChange are the ideal rollout's (bench.idealRollout) of revisions 1
	// and 2, each measured alone right before Holdfast's rollout or change; with their CPU times.
	idealRollout, idealChange       time.Duration
	idealRolloutCPU, idealChangeCPU measure.CPUTimes
	// floorRollout and floorChange are the ideal controller's (bench.idealController): the
	// applies, one watch per cluster and one status write per cluster on the hub.
	floorRollout, floorChange       time.Duration
	floorRolloutCPU, floorChangeCPU measure.CPUTimes
	heap, rss, rssEnd, peakRSS      int64
	idle                            measure.RequestCounts
	idleWindow                      time.Duration
	restHoldfast, restIdeal         []*measure.EditRun
	rollHoldfast, rollIdeal         []*measure.EditRun
	idealFailures                   []string
}

// idleGroups are the idle window's requests to the targets: watch requests, health probes and
// everything else (listed).
func (r *result) idleGroups(servers []string) (watches, probes, others int, listed []string) {
	for _, s := range servers {
		if s == "hub" {
			continue
		}
		for k, n := range r.idle.Requests[s] {
			switch {
			case k.Verb == "watch":
				watches += n
			case measure.IsProbe(k):
				probes += n
			default:
				others += n
				listed = append(listed, fmt.Sprintf("%s: %s %s %s × %d", s, k.Method, k.Verb, k.Resource, n))
			}
		}
	}
	slices.Sort(listed)
	return watches, probes, others, listed
}

// p99Ratio is Holdfast's p99 correction latency over the ideal's.
func p99Ratio(holdfast, ideal []*measure.EditRun) (h, i time.Duration, ratio float64) {
	return percentileRatio(holdfast, ideal, 99)
}

// percentileRatio is the p-th percentile correction latency of a over b's, with both.
func percentileRatio(a, b []*measure.EditRun, p float64) (pa, pb time.Duration, ratio float64) {
	ad, _, _ := measure.Latencies(a)
	bd, _, _ := measure.Latencies(b)
	if len(ad) == 0 || len(bd) == 0 {
		return 0, 0, 0
	}
	pa, pb = measure.Percentile(ad, p), measure.Percentile(bd, p)
	if pb <= 0 {
		return pa, pb, 0
	}
	return pa, pb, float64(pa) / float64(pb)
}

func latencyRows(t *measure.Table, what string, holdfast, ideal []*measure.EditRun) {
	for _, c := range []struct {
		name string
		runs []*measure.EditRun
	}{{"Holdfast", holdfast}, {"ideal", ideal}} {
		ds, failed, uncorrected := measure.Latencies(c.runs)
		t.Row(append([]string{fmt.Sprintf("%s, %s", what, c.name)}, append(measure.LatencyCells(ds), fmt.Sprint(failed), fmt.Sprint(uncorrected))...)...)
	}
}

func (r *result) print(cfg config) {
	fmt.Printf("### %d clusters\n\n", r.n)
	t := measure.NewTable("measure", "value")
	t.Row("setup (hub, API servers, simulated clusters registered)", measure.Seconds(r.setup))
	t.Row("controller start until every Cluster is Ready", measure.Seconds(r.clustersReady))
	t.Row(fmt.Sprintf("ideal rollout: one forced apply per object, %d workers, until the last apply returned", cfg.concurrency), measure.Seconds(r.idealRollout))
	t.Row("… CPU time during it: this process (controller) / hub / targets", r.idealRolloutCPU.String())
	t.Row(fmt.Sprintf("first rollout (%d objects per cluster): until every status object is Ready in sync", cfg.objects), measure.Seconds(r.rollout))
	t.Row("… first / median / last status object", spreadCell(r.rolloutSpread))
	t.Row("… CPU time during it: this process (controller) / hub / targets", r.rolloutCPU.String())
	t.Row("first rollout ÷ ideal rollout", measure.Ratio(r.rollout, r.idealRollout))
	t.Row("ideal controller's rollout: one label-selected watch per cluster, the same applies, one status write per cluster on the hub", measure.Seconds(r.floorRollout))
	t.Row("… CPU time during it: this process (controller) / hub / targets", r.floorRolloutCPU.String())
	t.Row("first rollout ÷ ideal controller's rollout", measure.Ratio(r.rollout, r.floorRollout))
	t.Row(fmt.Sprintf("ideal template change: one forced apply per object at the new revision, %d workers, until the last apply returned", cfg.concurrency), measure.Seconds(r.idealChange))
	t.Row("… CPU time during it: this process (controller) / hub / targets", r.idealChangeCPU.String())
	t.Row("template change to every cluster: until every status object is in sync at the new revision", measure.Seconds(r.change))
	t.Row("… first / median / last status object", spreadCell(r.changeSpread))
	t.Row("… CPU time during it: this process (controller) / hub / targets", r.changeCPU.String())
	t.Row("template change ÷ ideal template change", measure.Ratio(r.change, r.idealChange))
	t.Row("ideal controller's template change", measure.Seconds(r.floorChange))
	t.Row("… CPU time during it: this process (controller) / hub / targets", r.floorChangeCPU.String())
	t.Row("template change ÷ ideal controller's template change", measure.Ratio(r.change, r.floorChange))
	t.Row("controller Go heap after the rollout (after a forced GC, minus the baseline)", measure.MiB(r.heap))
	t.Row("process RSS after the rollout, minus the baseline", measure.MiB(r.rss))
	t.Row("process RSS at the end, minus the baseline", measure.MiB(r.rssEnd))
	t.Row("process peak RSS (VmHWM), minus the baseline", measure.MiB(r.peakRSS))
	fmt.Println(t)

	fmt.Println("Requests of the controller during the first rollout:")
	fmt.Println()
	servers := serversOf(r.rolloutRequests)
	fmt.Println(r.rolloutRequests.Table(servers...))
	fmt.Println("Writes to the hub during the first rollout:")
	fmt.Println()
	fmt.Println(hubWrites(r.rolloutRequests).MutatingTable())

	if r.idleWindow > 0 {
		w, p, o, listed := r.idleGroups(servers)
		fmt.Printf("Idle window of %s, requests to the targets: %d watch requests, %d health probe requests, %d others (%.1f probe requests per cluster per minute).\n\n",
			measure.Seconds(r.idleWindow), w, p, o, float64(p)/float64(r.n)/r.idleWindow.Minutes())
		if len(listed) > 0 {
			fmt.Printf("Others: %s.\n\n", strings.Join(listed, "; "))
		}
		fmt.Printf("Requests to the hub in the idle window: %d, of which writes:\n\n", r.idle.Total("hub"))
		fmt.Println(hubWrites(r.idle).MutatingTable())
	}

	lt := measure.NewTable(append(measure.LatencyHeader("correction latency: t0 (edit returned) until this program's watch sees the declared value"), "failed", "never corrected")...)
	latencyRows(lt, "at rest", r.restHoldfast, r.restIdeal)
	latencyRows(lt, "during the template change", r.rollHoldfast, r.rollIdeal)
	fmt.Println(lt)
	for _, c := range []struct {
		what            string
		holdfast, ideal []*measure.EditRun
	}{{"at rest", r.restHoldfast, r.restIdeal}, {"during the template change", r.rollHoldfast, r.rollIdeal}} {
		h, i, ratio := p99Ratio(c.holdfast, c.ideal)
		fmt.Printf("p99 %s: Holdfast %s, ideal %s: %.2f×.\n", c.what, measure.Millis(h), measure.Millis(i), ratio)
	}
	fmt.Println()
	if cfg.bystander {
		r.printBystander()
	}
	if len(r.idealFailures) > 0 {
		fmt.Printf("The ideal corrector's applies that failed: %s\n\n", strings.Join(r.idealFailures, "; "))
	}
}

func spreadCell(s measure.Spread[time.Duration]) string {
	return fmt.Sprintf("%s / %s / %s", measure.Seconds(s.Min), measure.Seconds(s.Median), measure.Seconds(s.Max))
}

// serversOf are the servers a window's counts name, targets first, then the hub.
func serversOf(rc measure.RequestCounts) []string {
	var out []string
	for s := range rc.Counts {
		if s != "hub" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return append(out, "hub")
}

func printSummary(cfg config, results []*result) {
	fmt.Println("### How cost grows")
	fmt.Println()
	t := measure.NewTable("clusters", "first rollout", "ideal rollout", "rollout ÷ ideal", "template change", "ideal change", "change ÷ ideal", "RSS after rollout", "peak RSS", "idle: other requests",
		"p50 / p99 at rest (ideal p99)", "p99 ratio at rest", "p50 / p99 during change (ideal p99)", "p99 ratio during change")
	for _, r := range results {
		_, _, others, _ := r.idleGroups(serversOf(r.idle))
		rh, _, _ := measure.Latencies(r.restHoldfast)
		ch, _, _ := measure.Latencies(r.rollHoldfast)
		_, ri, rr := p99Ratio(r.restHoldfast, r.restIdeal)
		_, ci, cr := p99Ratio(r.rollHoldfast, r.rollIdeal)
		t.Row(fmt.Sprint(r.n), measure.Seconds(r.rollout), measure.Seconds(r.idealRollout), measure.Ratio(r.rollout, r.idealRollout),
			measure.Seconds(r.change), measure.Seconds(r.idealChange), measure.Ratio(r.change, r.idealChange), measure.MiB(r.rss), measure.MiB(r.peakRSS), fmt.Sprint(others),
			fmt.Sprintf("%s / %s (%s)", measure.Millis(measure.Percentile(rh, 50)), measure.Millis(measure.Percentile(rh, 99)), measure.Millis(ri)), fmt.Sprintf("%.2f×", rr),
			fmt.Sprintf("%s / %s (%s)", measure.Millis(measure.Percentile(ch, 50)), measure.Millis(measure.Percentile(ch, 99)), measure.Millis(ci)), fmt.Sprintf("%.2f×", cr))
	}
	fmt.Println(t)
	for _, r := range results {
		_, _, others, _ := r.idleGroups(serversOf(r.idle))
		_, _, rr := p99Ratio(r.restHoldfast, r.restIdeal)
		_, _, cr := p99Ratio(r.rollHoldfast, r.rollIdeal)
		fmt.Printf("%d clusters: first rollout ≤ %d s: %s; template change ≤ %d s: %s; peak RSS ≤ 1 GiB: %s; idle, nothing but watches and probes: %s; p99 ≤ %d× the ideal's at rest: %s, during the change: %s.\n",
			r.n, goalSeconds, met(r.rollout <= goalSeconds*time.Second), goalSeconds, met(r.change <= goalSeconds*time.Second),
			met(r.peakRSS <= goalRSS), met(r.idleWindow > 0 && others == 0), goalRatio, met(rr > 0 && rr <= goalRatio), met(cr > 0 && cr <= goalRatio))
		fmt.Printf("%d clusters, Holdfast ÷ the ideal rollout on the same API servers: first rollout %s (%s ÷ %s), template change %s (%s ÷ %s).\n",
			r.n, measure.Ratio(r.rollout, r.idealRollout), measure.Seconds(r.rollout), measure.Seconds(r.idealRollout),
			measure.Ratio(r.change, r.idealChange), measure.Seconds(r.change), measure.Seconds(r.idealChange))
		fmt.Printf("%d clusters, Holdfast ÷ the ideal controller (a watch per cluster, the applies, a status write per cluster on the hub): first rollout %s (%s ÷ %s), template change %s (%s ÷ %s).\n",
			r.n, measure.Ratio(r.rollout, r.floorRollout), measure.Seconds(r.rollout), measure.Seconds(r.floorRollout),
			measure.Ratio(r.change, r.floorChange), measure.Seconds(r.change), measure.Seconds(r.floorChange))
	}
	fmt.Println()
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// hubWrites is rc with only the writes to the hub kept among its mutating requests.
func hubWrites(rc measure.RequestCounts) measure.RequestCounts {
	rc.Mutating = rc.MutatingTo("hub")
	return rc
}

package main

import (
	"fmt"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// round is one round's four changes.
type round struct {
	// idealAll is the ideal change to every cluster at once, idealWaves each wave's.
	idealAll   time.Duration
	idealWaves []time.Duration
	all, waves *change
}

// total is the time from the change until every status object was Ready in sync at the new
// revision, and for the waves until status.rollout was Complete, if later.
func (c *change) total() time.Duration {
	d := lastOf(c.ready, c.began)
	if c.rollout != nil && !c.rollout.complete.IsZero() {
		d = max(d, c.rollout.complete.Sub(c.began))
	}
	return d
}

// lastOf is the time from start until the last of at (0 when at is empty).
func lastOf(at map[string]time.Time, start time.Time) time.Duration {
	ds := sorted(at, start)
	if len(ds) == 0 {
		return 0
	}
	return ds[len(ds)-1]
}

// only is at restricted to clusters.
func only(at map[string]time.Time, clusters []string) map[string]time.Time {
	out := make(map[string]time.Time, len(clusters))
	for _, c := range clusters {
		if t, ok := at[c]; ok {
			out[c] = t
		}
	}
	return out
}

func sum(ds []time.Duration) time.Duration {
	var s time.Duration
	for _, d := range ds {
		s += d
	}
	return s
}

// span formats the first and last of sorted durations, "–" when there are none.
func span(ds []time.Duration) string {
	if len(ds) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f – %.3f s", ds[0].Seconds(), ds[len(ds)-1].Seconds())
}

// since formats t − start, or "–" when t was not seen.
func since(t, start time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return measure.Seconds(t.Sub(start))
}

// print prints round k; waves are the clusters of each wave, targets the target API servers.
func (r *round) print(k int, waves [][]string, targets []string) {
	fmt.Printf("### Round %d\n\n", k)
	w, all := r.waves, r.all
	t := measure.NewTable("wave", "clusters", "revision given", "applied on the targets", "status Ready", "status.rollout: wave reached / healthy",
		"wave: first given → last Ready", "ideal wave", "hand-over: wave before's last Ready → first given")
	var readyBefore time.Duration
	for i, sims := range waves {
		given, applied, ready := sorted(only(w.given, sims), w.began), sorted(only(w.applied, sims), w.began), sorted(only(w.ready, sims), w.began)
		reported := "–"
		if w.rollout != nil {
			reported = since(w.rollout.started[i], w.began) + " / " + since(w.rollout.healthy[i], w.began)
		}
		length, handOver := "–", "–"
		if len(given) > 0 && len(ready) > 0 {
			length = measure.Seconds(ready[len(ready)-1] - given[0])
		}
		if i > 0 && len(given) > 0 {
			handOver = measure.Seconds(given[0] - readyBefore)
		}
		if len(ready) > 0 {
			readyBefore = ready[len(ready)-1]
		}
		t.Row(fmt.Sprintf("%d (%s)", i+1, waveValue(i)), fmt.Sprint(len(sims)), span(given), span(applied), span(ready), reported,
			length, measure.Seconds(r.idealWaves[i]), handOver)
	}
	t.Row("baseline: all at once", fmt.Sprint(len(all.applied)), "–", span(sorted(all.applied, all.began)), span(sorted(all.ready, all.began)), "–",
		measure.Seconds(all.total()), measure.Seconds(r.idealAll), "–")
	fmt.Println("Times from the template change (its update returned), first – last cluster of the wave: revision given when the hub's watch saw the cluster's status object with the new spec.revision; applied when this program's watch of the target saw all of the cluster's ConfigMaps at the new revision; status Ready when the hub's watch saw the status object Ready in sync at it; status.rollout when the service set's status first showed status.rollout.wave at the wave, and its waves[i] with every cluster healthy. Ideal wave: the same change of the ideal's ConfigMaps on the wave's clusters, alone (one forced apply each, nothing waited for).")
	fmt.Println()
	fmt.Println(t.String())

	s := measure.NewTable("measure", "value")
	s.Row("ideal, at once: every cluster's ConfigMaps applied", measure.Seconds(r.idealAll))
	s.Row("ideal, in waves: the waves' applies one after the other", measure.Seconds(sum(r.idealWaves)))
	s.Row("baseline (no spec.rollout): every status object Ready at the new revision", measure.Seconds(all.total()))
	s.Row("… every cluster applied (targets)", measure.Seconds(lastOf(all.applied, all.began)))
	wTotal := w.total()
	complete := "–"
	if w.rollout != nil {
		complete = since(w.rollout.complete, w.began)
	}
	s.Row(fmt.Sprintf("waves (%d): status.rollout Complete", len(waves)), complete)
	s.Row("… every cluster applied (targets)", measure.Seconds(lastOf(w.applied, w.began)))
	s.Row("overhead of the waves: waves − baseline", measure.Seconds(wTotal-all.total()))
	if len(waves) > 1 {
		s.Row("… per wave boundary", measure.Seconds((wTotal-all.total())/time.Duration(len(waves)-1)))
	}
	s.Row("waves ÷ baseline", measure.Ratio(wTotal, all.total()))
	s.Row("baseline ÷ ideal at once", measure.Ratio(all.total(), r.idealAll))
	s.Row("waves ÷ ideal in waves", measure.Ratio(wTotal, sum(r.idealWaves)))
	if w.rollout != nil {
		s.Row("phases seen", fmt.Sprint(w.rollout.phases))
	}
	fmt.Println(s.String())

	c := measure.NewTable("during the change", "baseline", "waves")
	c.Row("requests to the targets (writes)", requestsCell(all.requests, targets), requestsCell(w.requests, targets))
	c.Row("requests to the hub (writes)", requestsCell(all.requests, []string{"hub"}), requestsCell(w.requests, []string{"hub"}))
	c.Row("CPU time: this process (controller) / hub / targets", all.cpu.String(), w.cpu.String())
	fmt.Println(c.String())
}

// requestsCell is the requests to servers, and the writes among them (health probes' reviews
// left out).
func requestsCell(rc measure.RequestCounts, servers []string) string {
	total, writes := 0, 0
	for _, s := range servers {
		total += rc.Total(s)
		for _, r := range rc.MutatingTo(s) {
			if !r.Review() {
				writes++
			}
		}
	}
	return fmt.Sprintf("%d (%d)", total, writes)
}

// printSummary gives the totals over the rounds.
func printSummary(rounds []*round) {
	var idealAll, idealWaves, all, waves []time.Duration
	for _, r := range rounds {
		idealAll = append(idealAll, r.idealAll)
		idealWaves = append(idealWaves, sum(r.idealWaves))
		all = append(all, r.all.total())
		waves = append(waves, r.waves.total())
	}
	fmt.Printf("### %d rounds\n\n", len(rounds))
	t := measure.NewTable("total", "min", "median", "max")
	row := func(label string, ds []time.Duration) {
		s := measure.SpreadOf(ds)
		t.Row(label, measure.Seconds(s.Min), measure.Seconds(s.Median), measure.Seconds(s.Max))
	}
	row("ideal, at once", idealAll)
	row("ideal, in waves", idealWaves)
	row("baseline: every status object Ready", all)
	row("waves: Complete", waves)
	var over []time.Duration
	for i := range rounds {
		over = append(over, waves[i]-all[i])
	}
	row("overhead: waves − baseline", over)
	fmt.Println(t.String())
}

package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/sharding"
)

// handoverResult is what was measured at one size with several replicas.
type handoverResult struct {
	n, replicas int
	ids         []string
	// namespace is the fleet's on the hub, where the Clusters are.
	namespace                     string
	setup, clustersReady, rollout time.Duration
	// hashed are the clusters each replica should hold by rendezvous hashing of the view of
	// all replicas; held what its holdfast_shard_clusters gauge said (sharesSettled: once they
	// agreed); connections the target connections its fleet registry kept.
	hashed, held, connections map[string]int
	sharesSettled             bool

	victim         string
	victimClusters []string
	// began, killed and ended are when the drift injection began, the victim was killed and
	// the injection ended (quiet after the last edit); stopTook how long its manager took to
	// return once cancelled.
	began, killed, ended time.Time
	stopTook             time.Duration
	// heldAll is the kill until the survivors' gauges first added up to every cluster.
	heldAll   time.Duration
	heldAllOK bool
	// gaps are the other stretches of the injection in which the gauges added up to fewer
	// than every cluster (a replica that could not renew its Lease in time stops acting).
	gaps []gap
	// firstWrite is the kill until a survivor's first accepted write to a cluster the victim
	// held; lastReached until a survivor first sent a request to the last of them (reached of
	// them at all).
	firstWrite         time.Duration
	firstWriteOK       bool
	firstWriteDesc     string
	lastReached        time.Duration
	reached            int
	edits              []*handoverEdit
	twice, victimAfter []string
	// twiceByTwo counts the edits of twice written by more than one replica; uncorrected
	// describes the edits never seen corrected.
	twiceByTwo              int
	uncorrected             []string
	failedWrites, unwritten int
	// writes are the accepted writes to the simulated clusters per replica during the injection.
	writes   map[string]int
	requests []replicaRequests
}

// replicaRequests are one replica's requests during the drift injection.
type replicaRequests struct {
	id     string
	counts measure.RequestCounts
}

// analyse attributes the writes the log holds to the edits, and times the hand-over.
func (r *handoverResult) analyse(log *writeLog, runs []*measure.EditRun, owner map[string]string, survivors sharding.View) {
	writes := log.Writes(r.began)
	r.writes = map[string]int{}
	first := time.Time{}
	for _, w := range writes {
		if w.ok() {
			r.writes[w.replica]++
		}
		if w.at.Before(r.killed) {
			continue
		}
		if w.replica == r.victim {
			r.victimAfter = append(r.victimAfter, fmt.Sprintf("%s at %s", w.req, offset(w.at, r.killed)))
			continue
		}
		if w.ok() && owner[w.cluster] == r.victim && (first.IsZero() || w.at.Before(first)) {
			first = w.at
			r.firstWriteDesc = fmt.Sprintf("%s by %s", w.req, w.replica)
		}
	}
	if !first.IsZero() {
		r.firstWrite, r.firstWriteOK = first.Sub(r.killed), true
	}
	for _, c := range r.victimClusters {
		next := survivors.Owner(types.NamespacedName{Namespace: r.namespace, Name: c}.String())
		if at, ok := log.First(next, c); ok {
			r.reached++
			r.lastReached = max(r.lastReached, at.Sub(r.killed))
		}
	}

	// Each edit's window: from its Update until the same ConfigMap's next edit, or the end.
	byObject := map[types.NamespacedName][]*measure.EditRun{}
	for _, e := range runs {
		k := types.NamespacedName{Namespace: e.Namespace, Name: e.Name}
		byObject[k] = append(byObject[k], e)
	}
	for k, es := range byObject {
		slices.SortFunc(es, func(a, b *measure.EditRun) int { return a.TSend.Compare(b.TSend) })
		for i, e := range es {
			end := r.ended
			if i+1 < len(es) {
				end = es[i+1].TSend
			}
			he := &handoverEdit{EditRun: e, victims: owner[k.Namespace] == r.victim}
			for _, w := range writes {
				if w.req.Resource != "configmaps" || w.req.Namespace != k.Namespace || w.req.Name != k.Name ||
					w.at.Before(e.TSend) || !w.at.Before(end) {
					continue
				}
				if !w.ok() {
					r.failedWrites++
					continue
				}
				he.writes = append(he.writes, w)
			}
			r.edits = append(r.edits, he)
			if e.Err == nil && !e.Corrected.IsZero() && len(he.writes) == 0 {
				r.unwritten++
			}
			if len(he.writes) > 1 {
				r.twice = append(r.twice, he.describe(r.killed))
				if slices.ContainsFunc(he.writes, func(w write) bool { return w.replica != he.writes[0].replica }) {
					r.twiceByTwo++
				}
			}
			if e.Err == nil && e.Corrected.IsZero() {
				r.uncorrected = append(r.uncorrected, he.describe(r.killed))
			}
		}
	}
	slices.Sort(r.twice)
	slices.Sort(r.uncorrected)
}

// gap is a stretch of time in which some clusters were held by no replica.
type gap struct {
	from, to time.Time
	// fewest is the fewest clusters held in it.
	fewest int
}

// shares finds, in the gauges sampled during the injection, when the survivors first held
// every cluster after the kill, and the other stretches in which not every cluster was held.
func (r *handoverResult) shares(samples []gaugeSample) {
	var open *gap
	for _, s := range samples {
		sum := 0
		for _, id := range r.ids {
			if id != r.victim || s.at.Before(r.killed) {
				sum += s.held[id]
			}
		}
		if !s.at.Before(r.killed) && sum == r.n && !r.heldAllOK {
			r.heldAll, r.heldAllOK = s.at.Sub(r.killed), true
		}
		handingOver := !s.at.Before(r.killed) && !r.heldAllOK
		switch {
		case sum < r.n && !handingOver && open == nil:
			open = &gap{from: s.at, to: s.at, fewest: sum}
		case sum < r.n && !handingOver:
			open.to, open.fewest = s.at, min(open.fewest, sum)
		case open != nil:
			open.to = s.at
			r.gaps = append(r.gaps, *open)
			open = nil
		}
	}
	if open != nil {
		r.gaps = append(r.gaps, *open)
	}
}

// gapsCell describes the gaps, times from the kill.
func (r *handoverResult) gapsCell() string {
	if len(r.gaps) == 0 {
		return "none"
	}
	var parts []string
	for _, g := range r.gaps {
		parts = append(parts, fmt.Sprintf("%s to %s (%d held at the fewest)", offset(g.from, r.killed), offset(g.to, r.killed), g.fewest))
	}
	return strings.Join(parts, "; ")
}

// describe is the edit and its writes, times from the kill.
func (e *handoverEdit) describe(killed time.Time) string {
	corrected := "never seen corrected"
	if !e.Corrected.IsZero() {
		corrected = "seen corrected at " + offset(e.Corrected, killed)
	}
	var ws []string
	for _, w := range e.writes {
		ws = append(ws, fmt.Sprintf("%s %s %s at %s", w.replica, w.req.Method, w.req.Verb, offset(w.at, killed)))
	}
	return fmt.Sprintf("%s/%s edited at %s, %s: %s", e.Namespace, e.Name, offset(e.T0, killed), corrected, strings.Join(ws, ", "))
}

// offset is t relative to the kill, signed, in seconds.
func offset(t, killed time.Time) string {
	return fmt.Sprintf("%+.3f s", t.Sub(killed).Seconds())
}

// phase names when an edit was made relative to the kill and the survivors holding every
// cluster.
func (r *handoverResult) phase(e *handoverEdit) int {
	switch {
	case e.T0.Before(r.killed):
		return 0
	case !r.heldAllOK || e.T0.Before(r.killed.Add(r.heldAll)):
		return 1
	default:
		return 2
	}
}

// corrected counts the edits, those that failed and those never seen corrected.
func (r *handoverResult) corrected() (n, failed, uncorrected int) {
	for _, e := range r.edits {
		switch {
		case e.Err != nil:
			failed++
		case e.Corrected.IsZero():
			uncorrected++
		}
	}
	return len(r.edits), failed, uncorrected
}

// sharesMet reports whether every replica held its even share of the clusters, ± shareSlack.
func (r *handoverResult) sharesMet() bool {
	even := float64(r.n) / float64(r.replicas)
	for _, id := range r.ids {
		if h := float64(r.held[id]); h < (1-shareSlack)*even || h > (1+shareSlack)*even {
			return false
		}
	}
	return true
}

func (r *handoverResult) shareCell(m map[string]int) string {
	var parts []string
	for _, id := range r.ids {
		parts = append(parts, fmt.Sprintf("%s %d (%.1f %%)", id, m[id], 100*float64(m[id])/float64(r.n)))
	}
	return strings.Join(parts, " / ")
}

func (r *handoverResult) print(cfg config) {
	fmt.Printf("### %d clusters, %d replicas\n\n", r.n, r.replicas)
	t := measure.NewTable("measure", "value")
	t.Row("setup (hub, API servers, simulated clusters registered)", measure.Seconds(r.setup))
	t.Row("replicas start until every Cluster is Ready", measure.Seconds(r.clustersReady))
	t.Row(fmt.Sprintf("first rollout (%d objects per cluster): until every status object is Ready in sync", cfg.objects), measure.Seconds(r.rollout))
	settled := ""
	if !r.sharesSettled {
		settled = fmt.Sprintf(" (**not** the hashing's after %s)", shareTimeout)
	}
	t.Row("clusters held after the rollout (holdfast_shard_clusters)"+settled, r.shareCell(r.held))
	t.Row("… by rendezvous hashing of the view of all replicas", r.shareCell(r.hashed))
	t.Row("… target connections each replica's fleet registry keeps", r.shareCell(r.connections))
	t.Row("drift injection", fmt.Sprintf("%d workers, one edit at a time each; kill %s after the start, edits until %s after it", cfg.editors, measure.Seconds(cfg.killAfter), measure.Seconds(cfg.afterKill)))
	t.Row("killed (manager cancelled, member Lease left to expire)", fmt.Sprintf("%s, holding %d clusters; its manager returned %s after the cancel", r.victim, len(r.victimClusters), measure.Seconds(r.stopTook)))
	t.Row("kill → the survivors hold every cluster (their holdfast_shard_clusters add up to the fleet, polled every 200 ms)", durationOr(r.heldAll, r.heldAllOK, "not within the injection"))
	t.Row("other stretches of the injection with clusters held by no replica (gauges sampled every 200 ms; times from the kill)", r.gapsCell())
	t.Row("**handover**: kill → a survivor's first accepted write to a cluster the killed replica held", durationOr(r.firstWrite, r.firstWriteOK, "none"))
	t.Row("… that write", r.firstWriteDesc)
	t.Row("kill → a survivor's first request of any kind to the last of the killed replica's clusters", fmt.Sprintf("%s (%d of %d clusters reached)", measure.Seconds(r.lastReached), r.reached, len(r.victimClusters)))
	n, failed, uncorrected := r.corrected()
	t.Row("edits / failed / never corrected", fmt.Sprintf("%d / %d / %d", n, failed, uncorrected))
	t.Row("edits whose ConfigMap was written more than once (accepted writes, from the edit until its next edit or the end): in all / by two replicas", fmt.Sprintf("%d / %d", len(r.twice), r.twiceByTwo))
	t.Row("edits seen corrected without a write logged", fmt.Sprint(r.unwritten))
	t.Row("refused writes of edited ConfigMaps (in their windows)", fmt.Sprint(r.failedWrites))
	t.Row("writes of the killed replica sent after the kill", fmt.Sprint(len(r.victimAfter)))
	var per []string
	for _, id := range r.ids {
		per = append(per, fmt.Sprintf("%s %d", id, r.writes[id]))
	}
	t.Row("accepted writes to the simulated clusters during the injection", strings.Join(per, " / "))
	fmt.Println(t)

	rt := measure.NewTable("requests during the injection", "to the targets", "of which writes (probes' reviews left out)", "to the hub")
	for _, rr := range r.requests {
		targets, writes := 0, 0
		for s := range rr.counts.Counts {
			if s == "hub" {
				continue
			}
			targets += rr.counts.Total(s)
			for _, q := range rr.counts.MutatingTo(s) {
				if !q.Review() {
					writes++
				}
			}
		}
		rt.Row(rr.id, fmt.Sprint(targets), fmt.Sprint(writes), fmt.Sprint(rr.counts.Total("hub")))
	}
	fmt.Println(rt)

	phases := []string{"before the kill", "from the kill until the survivors held every cluster", "after that"}
	lt := measure.NewTable(append(measure.LatencyHeader("correction latency: t0 (edit returned) until this program's watch sees the declared value"), "failed", "never corrected")...)
	for p, name := range phases {
		for _, victims := range []bool{true, false} {
			var runs []*measure.EditRun
			for _, e := range r.edits {
				if r.phase(e) == p && e.victims == victims {
					runs = append(runs, e.EditRun)
				}
			}
			whose := "the survivors' clusters"
			if victims {
				whose = "the killed replica's clusters"
			}
			ds, failed, uncorrected := measure.Latencies(runs)
			lt.Row(append([]string{name + ", " + whose}, append(measure.LatencyCells(ds), fmt.Sprint(failed), fmt.Sprint(uncorrected))...)...)
		}
	}
	fmt.Println(lt)
	if len(r.twice) > 0 {
		fmt.Printf("Edits written more than once (times from the kill):\n\n- %s\n\n", strings.Join(r.twice, "\n- "))
	}
	if len(r.uncorrected) > 0 {
		fmt.Printf("Edits never seen corrected, with the writes of their ConfigMap (times from the kill):\n\n- %s\n\n", strings.Join(r.uncorrected, "\n- "))
	}
	if len(r.victimAfter) > 0 {
		fmt.Printf("Writes of the killed replica after the kill: %s.\n\n", strings.Join(r.victimAfter, "; "))
	}
}

func durationOr(d time.Duration, ok bool, otherwise string) string {
	if !ok {
		return otherwise
	}
	return measure.Seconds(d)
}

func printHandoverSummary(results []*handoverResult) {
	for _, r := range results {
		n, failed, uncorrected := r.corrected()
		fmt.Printf("%d clusters, %d replicas: each holds %.0f–%.0f %% of the clusters: %s (%s); every drift corrected: %s (%d edits, %d failed, %d never corrected); none corrected twice: %s (%d written more than once, %d of them by two replicas); handover ≤ %s: %s (%s, kill → first write to a killed replica's cluster).\n",
			r.n, r.replicas, 100*(1-shareSlack)/float64(r.replicas), 100*(1+shareSlack)/float64(r.replicas), met(r.sharesMet()), r.shareCell(r.held),
			met(n > 0 && failed == 0 && uncorrected == 0), n, failed, uncorrected,
			met(len(r.twice) == 0), len(r.twice), r.twiceByTwo,
			measure.Seconds(goalHandover), met(r.firstWriteOK && r.firstWrite <= goalHandover), durationOr(r.firstWrite, r.firstWriteOK, "none"))
		fmt.Printf("%d clusters: the killed replica wrote nothing after the kill: %s (%d writes); the survivors held every cluster %s after the kill.\n",
			r.n, met(len(r.victimAfter) == 0), len(r.victimAfter), durationOr(r.heldAll, r.heldAllOK, "not within the injection"))
	}
	fmt.Println()
}

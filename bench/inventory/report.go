package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// sum adds sizes up.
func sum(sizes []int) int {
	t := 0
	for _, s := range sizes {
		t += s
	}
	return t
}

// sizes formats the sizes of several objects: their sum, then each, e.g. "300 bytes (100 + 200)".
func sizes(each []int) string {
	parts := make([]string, len(each))
	for i, s := range each {
		parts[i] = fmt.Sprint(s)
	}
	return fmt.Sprintf("%d bytes (%s)", sum(each), strings.Join(parts, " + "))
}

// kib formats bytes in KiB.
func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/1024) }

// p50s are the correction p50 of Holdfast and of the ideal corrector.
func (r *sizeResult) p50s() (holdfast, ideal time.Duration) {
	hd, _, _ := measure.Latencies(r.holdfast)
	id, _, _ := measure.Latencies(r.ideal)
	return measure.Percentile(hd, 50), measure.Percentile(id, 50)
}

// corrections is the number of Holdfast edits performed (the request counts' divisor).
func (r *sizeResult) corrections() int {
	n := 0
	for _, e := range r.holdfast {
		if e.Err == nil {
			n++
		}
	}
	return n
}

// probes counts the Cluster controller's health probes (GET /version, POST selfsubjectreviews)
// among the requests to server.
func (r *sizeResult) probes(server string) int {
	rs := r.counts.Requests[server]
	return rs[measure.RequestKind{Method: "GET", Verb: "discovery", Resource: "/version"}] +
		rs[measure.RequestKind{Method: "POST", Verb: "create", Resource: "selfsubjectreviews"}]
}

// perCorrection is the requests to server per correction, health probes left out.
func (r *sizeResult) perCorrection(server string) float64 {
	return float64(r.counts.Total(server)-r.probes(server)) / float64(max(r.corrections(), 1))
}

func latencyRow(t *measure.Table, label string, ds []time.Duration, extra ...string) {
	t.Row(slices.Concat([]string{label}, measure.LatencyCells(ds), extra)...)
}

// print reports one size; small is the smallest size's result (r itself for the smallest).
func (r *sizeResult) print(b *bench, small *sizeResult) {
	fmt.Printf("### %d ConfigMaps\n\n", r.n)
	setup := measure.NewTable("measure", "value")
	if len(r.templateBytes) == 1 {
		setup.Row("ServiceTemplate as served (JSON)", fmt.Sprintf("%d bytes", r.templateBytes[0]))
	} else {
		setup.Row(fmt.Sprintf("%d ServiceTemplates as served (JSON), one per service, in all (each)", len(r.templateBytes)), sizes(r.templateBytes))
	}
	setup.Row(fmt.Sprintf("MultiClusterService created until its status object is Ready with %d of %d in sync", r.n+1, r.n+1), measure.Seconds(r.deployed))
	setup.Row("ClusterServiceStatus as served (JSON), once deployed", fmt.Sprintf("%d bytes", r.statusBytes))
	if len(r.shardBytes) > 0 {
		setup.Row(fmt.Sprintf("%d ClusterServiceInventory shards (status.inventory.names) as served (JSON), in all (smallest, largest)", len(r.shardBytes)),
			fmt.Sprintf("%d bytes (%d, %d)", sum(r.shardBytes), slices.Min(r.shardBytes), slices.Max(r.shardBytes)))
	} else {
		setup.Row("ClusterServiceInventory shards", "none: the inventory is in the status object")
	}
	setup.Row("the service set's fight limit (spec.drift.fight.maxCorrections; the edits per ConfigMap at most)", fmt.Sprintf("%d (%d)", measure.FightMax, (b.cfg.edits+r.n-1)/r.n))
	setup.Row(fmt.Sprintf("the ideal corrector's %d ConfigMaps applied (%d at a time)", r.n, measure.IdealWorkers), measure.Seconds(r.idealDep))
	setup.Row("MultiClusterService deleted until it and its namespace are gone from the target", measure.Seconds(r.withdrawn))
	fmt.Println(setup)

	hd, hf, hu := measure.Latencies(r.holdfast)
	id, ifl, iu := measure.Latencies(r.ideal)
	hp, ip := r.p50s()
	sh, si := small.p50s()
	t := measure.NewTable(append(measure.LatencyHeader(fmt.Sprintf("correction latency, %d ConfigMaps: t0 (edit returned) until this program's watch sees the declared data", r.n)),
		fmt.Sprintf("p50 ÷ p50 at %d", small.n), "p50 ÷ the ideal's p50")...)
	latencyRow(t, "Holdfast", hd, measure.Ratio(hp, sh), measure.Ratio(hp, ip))
	latencyRow(t, "ideal corrector (one watch, one forced apply)", id, measure.Ratio(ip, si), "1.00×")
	latencyRow(t, fmt.Sprintf("for context: Holdfast's correction seen until the controller's last request (then %s without one)", b.cfg.quiet), r.tails, "", "")
	fmt.Println(t)
	fmt.Printf("Edits: Holdfast %d of %d performed, %d seen corrected; ideal %d of %d performed, %d seen corrected (%d applies sent).\n\n",
		len(r.holdfast)-hf, len(r.holdfast), len(hd), len(r.ideal)-ifl, len(r.ideal), len(id), r.idealApplies)
	if hu+iu > 0 {
		fmt.Printf("Never seen corrected within %s: Holdfast %d, ideal %d (left out of the latencies).\n\n", b.cfg.correctTimeout, hu, iu)
	}

	c := r.corrections()
	per := func(n float64) string { return fmt.Sprintf("%.2f", n/float64(max(c, 1))) }
	rt := measure.NewTable(fmt.Sprintf("the controller's requests in the edit phase (%s), per correction (%d)", measure.Seconds(r.window), c), b.Names[0], "hub")
	verbs := slices.Clone(measure.Verbs)
	for _, s := range b.Servers {
		for v := range r.counts.Counts[s] {
			if !slices.Contains(verbs, v) {
				verbs = append(verbs, v)
			}
		}
	}
	for _, v := range verbs {
		t, h := r.counts.Counts[b.Names[0]][v], r.counts.Counts["hub"][v]
		if t+h > 0 {
			rt.Row(v, per(float64(t)), per(float64(h)))
		}
	}
	rt.Row("**total**", per(float64(r.counts.Total(b.Names[0]))), per(float64(r.counts.Total("hub"))))
	rt.Row("of which the health probe (GET /version, POST selfsubjectreviews, every 10s)", per(float64(r.probes(b.Names[0]))), per(float64(r.probes("hub"))))
	rt.Row("**total without the probe**", fmt.Sprintf("%.2f", r.perCorrection(b.Names[0])), fmt.Sprintf("%.2f", r.perCorrection("hub")))
	for _, dir := range []struct {
		label string
		m     map[string]map[string]int64
	}{{"request bodies sent", r.counts.BytesSent}, {"response bodies read", r.counts.BytesRead}} {
		for _, v := range verbs {
			if t, h := dir.m[b.Names[0]][v], dir.m["hub"][v]; t+h > 0 {
				rt.Row(dir.label+": "+v, kib(float64(t)/float64(max(c, 1))), kib(float64(h)/float64(max(c, 1))))
			}
		}
	}
	fmt.Println(rt)
	fmt.Println("Mutating requests of the controller in the edit phase, grouped:")
	fmt.Println()
	fmt.Println(r.counts.MutatingTable())
}

func printSummary(b *bench, results []*sizeResult) {
	small := results[0]
	sh, si := small.p50s()
	fmt.Printf("### Summary\n\n")
	t := measure.NewTable("ConfigMaps", "Holdfast p50", "ideal p50", "Holdfast ÷ ideal",
		fmt.Sprintf("Holdfast p50 ÷ at %d", small.n), fmt.Sprintf("ideal p50 ÷ at %d", small.n),
		"requests per correction to the target / hub (without probes)", "bytes read from the hub per correction")
	for _, r := range results {
		hp, ip := r.p50s()
		t.Row(fmt.Sprint(r.n), measure.Millis(hp), measure.Millis(ip), measure.Ratio(hp, ip),
			measure.Ratio(hp, sh), measure.Ratio(ip, si),
			fmt.Sprintf("%.2f / %.2f", r.perCorrection(b.Names[0]), r.perCorrection("hub")),
			kib(float64(measure.Bytes(r.counts.BytesRead, "hub"))/float64(max(r.corrections(), 1))))
	}
	fmt.Println(t)
	for _, r := range results[1:] {
		hp, ip := r.p50s()
		verdict := "met"
		if hp == 0 || sh == 0 || float64(hp) > goalFactor*float64(sh) {
			verdict = "**not met**"
		}
		fmt.Printf("- p50 at %d within %d× of p50 at %d: %s (%s against %s: %s). Against the ideal corrector: Holdfast ÷ ideal %s at %d, %s at %d (%s).\n",
			r.n, goalFactor, small.n, verdict, measure.Millis(hp), measure.Millis(sh), measure.Ratio(hp, sh),
			measure.Ratio(hp, ip), r.n, measure.Ratio(sh, si), small.n,
			measure.Ratio(float64(hp)/float64(ip), float64(sh)/float64(si)))
	}
	fmt.Println()
}

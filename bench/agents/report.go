package main

import (
	"fmt"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// result is one mode's figures.
type result struct {
	mode string
	n    int
	// clustersReady is from the controller's start until every Cluster was Ready (in Pull mode
	// this includes registering the clusters and starting their agents).
	clustersReady             time.Duration
	idealRollout, idealChange idealRun
	// floorRollout and floorChange are the pull floor's (bench.pullFloor), in Pull mode only.
	floorRollout, floorChange floorRun
	rollout, change           time.Duration
	rolloutCPU, changeCPU     cpuTimes
	rolloutRequests           measure.RequestCounts
	changeRequests            measure.RequestCounts
	heap, rss, peakRSS        int64
	agents                    *agentsProcess
	agentsRSS, agentsPeakRSS  int64
	// agentRestarts counts the agents that ended with an error and were started again.
	agentRestarts            int
	idleServed, changeServed served
	idleTargets              served
	changeTargets            served
	idleController           measure.RequestCounts
	idleWindow               time.Duration
	// changeTimeline splits the template change in Pull mode.
	changeTimeline changeTimeline
	// changeReconciles are the hub controller's reconciles during the template change, and
	// changeAgentReconciles the agents' (Pull mode, agents in a process of their own).
	changeReconciles, changeAgentReconciles reconcileTimes
	// changeSlowest are the kinds of request the hub API server spent the most time serving
	// during the template change, with their mean duration.
	changeSlowest string
}

// idlePerMinute is the hub API server's requests per idle minute.
func (r *result) idlePerMinute() float64 {
	return r.idleServed.total() / r.idleWindow.Minutes()
}

// controllerTotal is the requests the hub controller sent, to the hub and to every target.
func controllerTotal(rc measure.RequestCounts) int {
	n := 0
	for server := range rc.Counts {
		n += rc.Total(server)
	}
	return n
}

func (r *result) print() {
	fmt.Printf("## %s mode, %d clusters\n\n", r.mode, r.n)
	t := measure.NewTable("measure", "value")
	t.Row("every Cluster Ready after the controller started", measure.Seconds(r.clustersReady))
	r.idealRollout.row(t, "ideal rollout")
	if r.mode == "pull" {
		r.floorRollout.rows(t, "pull floor's rollout")
	}
	t.Row("first rollout (÷ ideal)", fmt.Sprintf("%s (%s)", measure.Seconds(r.rollout), measure.Ratio(r.rollout, r.idealRollout.total())))
	if r.mode == "pull" {
		t.Row("first rollout ÷ pull floor", measure.Ratio(r.rollout, r.floorRollout.took))
	}
	t.Row("CPU during it: controller / hub / targets / agents", fmt.Sprintf("%s / %s", r.rolloutCPU.CPUTimes, measure.Seconds(r.rolloutCPU.Agents)))
	t.Row("hub controller's requests during it: hub / targets", fmt.Sprintf("%d / %d", r.rolloutRequests.Total("hub"), controllerTotal(r.rolloutRequests)-r.rolloutRequests.Total("hub")))
	r.idealChange.row(t, "ideal template change")
	if r.mode == "pull" {
		r.floorChange.rows(t, "pull floor's template change")
	}
	t.Row("template change (÷ ideal)", fmt.Sprintf("%s (%s)", measure.Seconds(r.change), measure.Ratio(r.change, r.idealChange.total())))
	if r.mode == "pull" {
		t.Row("template change ÷ pull floor", measure.Ratio(r.change, r.floorChange.took))
		r.changeTimeline.row(t)
	}
	t.Row("CPU during it: controller / hub / targets / agents", fmt.Sprintf("%s / %s", r.changeCPU.CPUTimes, measure.Seconds(r.changeCPU.Agents)))
	t.Row("hub controller's requests during it: hub / targets", fmt.Sprintf("%d / %d", r.changeRequests.Total("hub"), controllerTotal(r.changeRequests)-r.changeRequests.Total("hub")))
	t.Row("hub controller: Go heap after the rollout (forced GC)", measure.MiB(r.heap))
	t.Row("hub controller: RSS after the rollout / peak", measure.MiB(r.rss)+" / "+measure.MiB(r.peakRSS))
	if r.mode == "pull" {
		t.Row("agents started again after an error (as a kubelet restarts a container)", fmt.Sprint(r.agentRestarts))
		t.Row("agents' process: RSS after the rollout / peak (per agent)", fmt.Sprintf("%s / %s (%s)", measure.MiB(r.agentsRSS), measure.MiB(r.agentsPeakRSS), measure.MiB(r.agentsPeakRSS/int64(r.n))))
	}
	t.Row(fmt.Sprintf("hub API server: requests served in %s idle (per minute)", r.idleWindow), fmt.Sprintf("%.0f (%.0f)", r.idleServed.total(), r.idlePerMinute()))
	t.Row("target API servers: requests served in it (per minute)", fmt.Sprintf("%.0f (%.0f)", r.idleTargets.total(), r.idleTargets.total()/r.idleWindow.Minutes()))
	t.Row("hub controller's requests in it: hub / targets", fmt.Sprintf("%d / %d", r.idleController.Total("hub"), controllerTotal(r.idleController)-r.idleController.Total("hub")))
	t.Row("hub API server: requests served during the template change (writes), per cluster",
		fmt.Sprintf("%.1f (%.1f)", r.changeServed.total()/float64(r.n), r.changeServed.writes()/float64(r.n)))
	fmt.Println(t)
	fmt.Printf("Requests the hub API server served while idle: %s.\n\n", r.idleServed)
	fmt.Printf("Requests the target API servers served while idle: %s.\n\n", r.idleTargets)
	fmt.Printf("Requests the hub API server served during the template change: %s.\n\n", r.changeServed)
	fmt.Printf("Of those, the hub controller's: %s.\n\n", sentTo(r.changeRequests, "hub"))
	fmt.Printf("Requests the target API servers served during the template change: %s.\n\n", r.changeTargets)
	fmt.Printf("What the hub API server took longest serving during the template change (count × mean): %s.\n\n", r.changeSlowest)
	fmt.Printf("The hub controller's reconciles during the template change: %s.\n\n", r.changeReconciles)
	if len(r.changeAgentReconciles) > 0 {
		fmt.Printf("The agents' reconciles during the template change: %s.\n\n", r.changeAgentReconciles)
	}
}

// row adds the ideal's row to t: publish + applies in Pull mode, applies in Push mode.
func (i idealRun) row(t *measure.Table, what string) {
	if i.publish > 0 {
		t.Row(what+": publish + applies", fmt.Sprintf("%s + %s = %s", measure.Seconds(i.publish), measure.Seconds(i.apply), measure.Seconds(i.total())))
		return
	}
	t.Row(what+": applies", measure.Seconds(i.total()))
}

// printComparison is the table of Pull against Push and the goals.
func printComparison(cfg config, results map[string]*result) {
	push, pull := results["push"], results["pull"]
	if push == nil || pull == nil {
		return
	}
	fmt.Printf("## Pull against Push, %d clusters\n\n", cfg.clusters)
	t := measure.NewTable("measure", "Push", "Pull", "Pull ÷ Push")
	t.Row("template change ÷ its ideal", measure.Ratio(push.change, push.idealChange.total()), measure.Ratio(pull.change, pull.idealChange.total()), "")
	t.Row("template change ÷ pull floor", "", measure.Ratio(pull.change, pull.floorChange.took), "")
	t.Row("template change", measure.Seconds(push.change), measure.Seconds(pull.change), measure.Ratio(pull.change, push.change))
	t.Row("first rollout", measure.Seconds(push.rollout), measure.Seconds(pull.rollout), measure.Ratio(pull.rollout, push.rollout))
	t.Row("hub controller RSS after the rollout", measure.MiB(push.rss), measure.MiB(pull.rss), measure.Ratio(float64(pull.rss), float64(push.rss)))
	t.Row("hub controller peak RSS", measure.MiB(push.peakRSS), measure.MiB(pull.peakRSS), measure.Ratio(float64(pull.peakRSS), float64(push.peakRSS)))
	t.Row("hub controller Go heap", measure.MiB(push.heap), measure.MiB(pull.heap), measure.Ratio(float64(pull.heap), float64(push.heap)))
	t.Row("hub API server requests per idle minute", fmt.Sprintf("%.0f", push.idlePerMinute()), fmt.Sprintf("%.0f", pull.idlePerMinute()), measure.Ratio(pull.idlePerMinute(), push.idlePerMinute()))
	t.Row("target API servers' requests per idle minute", fmt.Sprintf("%.0f", push.idleTargets.total()/push.idleWindow.Minutes()), fmt.Sprintf("%.0f", pull.idleTargets.total()/pull.idleWindow.Minutes()),
		measure.Ratio(pull.idleTargets.total()/pull.idleWindow.Minutes(), push.idleTargets.total()/push.idleWindow.Minutes()))
	t.Row("hub API server writes per cluster during the template change", fmt.Sprintf("%.1f", push.changeServed.writes()/float64(push.n)), fmt.Sprintf("%.1f", pull.changeServed.writes()/float64(pull.n)), "")
	t.Row("controller CPU during the template change", measure.Seconds(push.changeCPU.Self), measure.Seconds(pull.changeCPU.Self), measure.Ratio(pull.changeCPU.Self, push.changeCPU.Self))
	fmt.Println(t)
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**not met**"
	}
	changeRatio := pull.change.Seconds() / pull.idealChange.total().Seconds()
	memRatio := float64(pull.rss) / float64(push.rss)
	fmt.Printf("Goal: a template change in Pull mode ≤ %.1f× its ideal loop (publish + applies): %.2f×, %s.\n", goalChange, changeRatio, verdict(changeRatio <= goalChange))
	fmt.Printf("Against the pull floor (publish, one hub watch and one target watch per cluster, the same applies, one status write), for information: %s.\n",
		measure.Ratio(pull.change, pull.floorChange.took))
	fmt.Printf("Goal: the hub controller's memory in Pull mode ≤ 1/3 of Push mode's: %.2f, %s.\n\n", memRatio, verdict(memRatio <= goalMemory))
}

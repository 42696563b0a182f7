// Command soak runs the Holdfast controller against real control planes for a long time while
// injecting faults, and checks invariants after every round of them (issue 13: "30 minutes of
// faults: random drifts, SIGKILL of the controller, API server stop/start, template/label
// changes, Report/Correct switches; invariants").
//
// It starts a hub and -clusters (3) targets with internal/localfleet (each target with
// kube-controller-manager, and -nodes (2) simulated nodes run by kube-scheduler and kwok, so that
// the web Deployment's pods run and the service set becomes Ready: applied and healthy), builds cmd/holdfast and runs `holdfast controller` as a child process
// against the hub, so that it can be killed with SIGKILL and started again. One
// MultiClusterService in ContinuousWithDriftDetection mode selects the Clusters labelled
// soak.holdfast.dev/member=true (all of them at first) and deploys two services from two inline
// ServiceTemplates into namespace soak-apps: "config" (the Namespace, ConfigMaps app-config,
// app-flags and, in even revisions only, app-extra, and Secret app-secret, whose token is a
// planted value) and "web" (a Deployment and a Service). Its fight limit is raised to 1,000
// corrections in 10 minutes: the soak drifts the same few objects again and again, and the
// default (5) would make them Contested, corrected only after a backoff of up to 5 minutes,
// longer than a round's settle time.
//
// The soak runs in rounds until -duration (30m) of wall time passed since the first fault. Each
// round is -round (90s) of faults, one every 0.25-2.75 s chosen with a seeded random generator
// (-seed; printed, so that a run can be repeated as far as timing allows):
//
//   - drift on a random matched target whose API server is up, as field manager soak-editor: a
//     ConfigMap value or the Secret's token edited (Update), the Deployment scaled (scale
//     subresource), its env or image changed, the Service's targetPort changed, a declared label
//     changed (merge patch), a managed object deleted, rarely the whole namespace deleted;
//   - SIGKILL of the controller, started again 0-8 s later (drift goes on meanwhile);
//   - a target's API server (and kube-controller-manager) stopped for 3 s to -outage-max (45s)
//     and started again on the same port, at most one target at a time; the hub's, rarely, for
//     3-12 s, never within 20 s of a controller start (`holdfast controller` exits when it cannot
//     reach the hub at start, as controller-runtime programs do, for their Deployment to restart
//     them: not what invariant 3 is about);
//   - a template change (the next revision of one template: values, a data key that only that
//     revision has, app-extra added or dropped);
//   - a Cluster label change: membership removed (the cluster is unmatched and must be
//     withdrawn; at least one cluster stays matched) or given back, or an unrelated label changed;
//   - the drift action switched between Correct and Report;
//   - in Report mode, a correction request (the holdfast.dev/reconcile-requested-at annotation on
//     the MultiClusterService or on one ClusterServiceStatus);
//   - from round 4 on (after the rounds of invariant 3's memory baseline), a flood, in the
//     background, one batch at a time: 200 ConfigMaps on a random target, in namespace soak-flood, labelled
//     holdfast.dev/managed-by=holdfast (as anyone who may create objects there can) and carrying
//     a 96 KiB holdfast.dev/ annotation; once a target holds -flood-objects (1,000) of them, a
//     batch is rewritten with new annotations instead. None is in an inventory: the controller
//     must keep what it holds of them bounded (issue 27), so invariant 3 holds with ~96 MiB of
//     such annotations a target.
//
// Then the faults stop, stopped API servers are started, the controller is started if it is
// down, and the invariants are checked:
//
//  1. Converged: within -settle (60s) every matched target holds exactly the declared objects
//     (by Holdfast's labels), each with the declared content of the current template revisions
//     (every declared field; a ConfigMap's or Secret's data exactly the declared keys), and its
//     ClusterServiceStatus says so (Ready, every object in sync, nothing drifted, the service
//     set's generation observed). In Report mode this is checked after a correction request
//     (the annotation), which must then be handled by every matched cluster.
//  2. Truthful drift records: every drift record with a correctedTime is checked against this
//     program's own watches of the targets: some version of the object newer than the drift the
//     record is about (the last fault on that object sent before the record's detectedTime)
//     matches the declaration of a template revision current around then, and arrived no later
//     than correctedTime + -tolerance (10s, for watch delivery under load). A record is skipped
//     (inconclusive) when this program's watch had to list again (after an API server restart)
//     in that interval. Every drift record is also checked for a cause: the last change of a
//     matching type this program made to that object (a deletion for Deleted, an edit for
//     Changed, or a namespace deletion), sent before detectedTime and not undone before it;
//     nothing else touches the managed objects, so a record without one is a false drift (for
//     example Holdfast's own prune or template change taken for someone else's). In Report
//     mode, before the correction request and after -report-quiet (15s) without faults, every
//     object whose content matches no revision ever declared (that is, it carries a drift) must
//     be reported: its status entry not InSync and its newest drift record not marked corrected.
//     Recorded once: the records a change of this program explains (as above) are counted per
//     change; two of one change fail ("recorded twice") unless they may be about two drifts
//     (records of two status objects, the object back as declared before the later one was
//     detected, disjoint fields; two of one object after a namespace deletion are inconclusive).
//     A change with no record fails only when one was certainly due: the object was as declared
//     right before, and for 15 s after it nothing else changed the object, no template revision
//     came, the cluster stayed matched, one controller incarnation ran throughout (from 10 s
//     before), no API server was stopped, this program's watch listed nothing again, and the
//     polls saw every record of the cluster; else inconclusive. Right author: a record of the
//     change type explained by an edit names the field manager it was made with (soak-editor);
//     a comparison naming another is inconclusive (managedFields after a merge or a restart),
//     deletions have no author and are not counted.
//  3. The controller never exits except by this program's SIGKILL, and its log never says
//     "panic". Its memory is bounded: the resident set (VmRSS) of whichever incarnation runs is
//     read about once a second; the highest peak of rounds 1-3 is the baseline, and every later
//     round's peak must stay within max(2 × baseline, baseline + 150 MiB) (inconclusive for a
//     round without a sample).
//  4. Withdrawn: every unmatched target holds none of the service set's objects, its namespace is
//     gone and so is its ClusterServiceStatus, within the same settle time.
//  5. No planted Secret value (the declared tokens of every revision and every value a drift
//     wrote), as is or base64-encoded, appears in the controller's log or in the status objects
//     and Events on the hub (ClusterServiceStatuses, MultiClusterServices, Events, as JSON).
//
// It prints the faults by kind, the invariant checks passed, failed and inconclusive, and every
// violation in detail, as Markdown, and exits with status 1 on any violation. The controller's log
// and a line per fault are kept in -log-dir (a new temporary directory by default, printed).
//
// It lives under test/, not bench/ (where it began): it passes or fails rather than measures, and
// it is run by hand, not by CI, which runs only its smoke run (TestSmoke, in `make bench`).
//
// Usage: make soak, or go run ./test/soak [-duration 30m] [-seed N]
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

type config struct {
	clusters, nodes, floodObjects             int
	duration, round, settle, tolerance, quiet time.Duration
	outageMax, gapMin, gapMax, startupTimeout time.Duration
	seed                                      uint64
	holdfast, commit, logDir                  string
}

func main() {
	var cfg config
	flag.IntVar(&cfg.clusters, "clusters", 3, "number of target clusters (at least 2: one stays matched while another is withdrawn)")
	flag.IntVar(&cfg.nodes, "nodes", 2, "simulated nodes of each target (kwok): the web Deployment's pods run there, so that it becomes Available and the service set Ready")
	flag.IntVar(&cfg.floodObjects, "flood-objects", 1000, "labelled objects the flood fault makes on each target at most (0: no flood)")
	flag.DurationVar(&cfg.duration, "duration", 30*time.Minute, "wall time of the soak from the first fault: rounds of faults and their settle phases (the setup before is not counted)")
	flag.DurationVar(&cfg.round, "round", 90*time.Second, "length of the fault phase of a round")
	flag.DurationVar(&cfg.settle, "settle", 60*time.Second, "how long the controller gets after a round's faults to converge (after the correction request in Report mode)")
	flag.DurationVar(&cfg.quiet, "report-quiet", 15*time.Second, "in Report mode, the wait without faults before checking that drifted objects are reported")
	flag.DurationVar(&cfg.tolerance, "tolerance", 10*time.Second, "how much later than a record's correctedTime this program's watch may deliver the corrected object")
	flag.DurationVar(&cfg.outageMax, "outage-max", 45*time.Second, "longest stop of a target's API server (the shortest is 3s)")
	flag.DurationVar(&cfg.gapMin, "gap-min", 250*time.Millisecond, "shortest pause between two faults")
	flag.DurationVar(&cfg.gapMax, "gap-max", 2750*time.Millisecond, "longest pause between two faults")
	flag.DurationVar(&cfg.startupTimeout, "startup-timeout", 5*time.Minute, "how long the first deployment may take")
	flag.Uint64Var(&cfg.seed, "seed", 0, "seed of the fault generator; 0 picks one from the clock (printed)")
	flag.StringVar(&cfg.holdfast, "holdfast", "", "a holdfast binary to run instead of building cmd/holdfast")
	flag.StringVar(&cfg.commit, "commit", "", "build the controller from this commit (git archive) instead of the working tree")
	flag.StringVar(&cfg.logDir, "log-dir", "", "where the controller's log and the fault log are kept (default: a new temporary directory)")
	measure.ParseFlags(measure.AtLeast("clusters", 2))
	if cfg.seed == 0 {
		cfg.seed = uint64(time.Now().UnixNano())%1_000_000 + 1
	}
	if cfg.gapMax < cfg.gapMin || cfg.outageMax < 3*time.Second {
		fmt.Fprintln(os.Stderr, "Error: -gap-max must be at least -gap-min and -outage-max at least 3s")
		os.Exit(2)
	}
	violations := 0
	measure.Main(func(ctx context.Context) error {
		s := &soak{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.seed, cfg.seed^0x5eed))}
		err := s.run(ctx)
		violations = len(s.violations)
		return err
	})
	if violations > 0 {
		os.Exit(1)
	}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/sandbox"
)

// target is one target cluster as this program sees it.
type target struct {
	name string
	cp   *sandbox.ControlPlane
	c    client.Client
	dyn  dynamic.Interface

	// matched is whether its Cluster carries the membership label (the main loop's view).
	matched bool

	mu   sync.Mutex
	down bool // its API server is stopped or being restarted
	done chan struct{}
}

func (t *target) isDown() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.down
}

// faultEvent is a change this program made that can explain a drift record: a write to one
// object (ref set, rv the revision it produced when known), or to every object of a cluster
// (whole: a namespace deletion).
type faultEvent struct {
	seq     int // its index in soak.events
	at      time.Time
	cluster string
	ref     objRef
	whole   bool
	deleted bool
	rv      int64
	kind    string
	manager string // the field manager of an edit; empty for a deletion
}

// outage is a stop of a target's API server (cluster "" for the hub's); to is zero until it is
// back.
type outage struct {
	cluster string
	span
}

// revChange is when a template got a revision.
type revChange struct {
	at       time.Time
	template string
	rev      int
}

type soak struct {
	cfg config
	rng *rand.Rand

	fleet   *localfleet.Fleet
	hub     client.Client
	targets []*target
	ctrl    *controllerProc
	logs    *logScanner
	logDir  string
	faultW  *os.File
	tl      *timeline
	records *recordBook
	sec     *secrets

	revs       revisions
	revHistory []revChange
	action     holdfastv1.DriftAction
	events     []faultEvent
	outages    []outage
	eventsMu   sync.Mutex
	declCache  map[string]map[int]declaration
	driftCount int

	hubMu      sync.Mutex
	hubDown    bool
	hubDone    chan struct{}
	restartAt  time.Time // when a killed controller is started again; zero when none is due
	requestSeq int

	faults     *counter
	checks     *checkCounter
	tally      *tally
	rss        *rssSampler
	peaks      []roundPeak
	baseline   int64     // the highest RSS peak of the warm-up rounds
	endPeak    rssSample // after the last round's checks
	roundStart time.Time
	violations []string

	floodMu    sync.Mutex
	floodCount map[string]int // flood objects made on each target
	floodGen   int            // flood faults so far, the content of their annotations
	flooding   bool           // a flood batch is running
	settles    []time.Duration
	rounds     int
	faultTime  time.Duration
}

func (s *soak) run(ctx context.Context) (retErr error) {
	s.faults, s.checks, s.tally, s.rss = newCounter(), newCheckCounter(), newTally(), &rssSampler{}
	s.revs = revisions{configTemplate: 0, webTemplate: 0}
	s.action = holdfastv1.DriftActionCorrect
	s.declCache = map[string]map[int]declaration{}
	s.sec = &secrets{run: fmt.Sprintf("%08x", s.rng.Uint32())}
	s.tl = newTimeline()

	fmt.Printf("Machine: %s\n\n", measure.Machine())
	fmt.Printf("Seed: %d\n\n", s.cfg.seed)
	if _, err := sandbox.BinaryDir(); err != nil {
		return err
	}
	s.logDir = s.cfg.logDir
	if s.logDir == "" {
		dir, err := os.MkdirTemp("", "holdfast-soak-")
		if err != nil {
			return err
		}
		s.logDir = dir
	} else if err := os.MkdirAll(s.logDir, 0o755); err != nil {
		return err
	}
	fw, err := os.Create(filepath.Join(s.logDir, "faults.log"))
	if err != nil {
		return err
	}
	s.faultW = fw
	defer func() { _ = fw.Close() }()
	fmt.Fprintf(os.Stderr, "Logs: %s (controller.log, faults.log)\n", s.logDir)

	binary := s.cfg.holdfast
	if binary == "" {
		fmt.Fprintln(os.Stderr, "Building cmd/holdfast")
		if binary, err = buildHoldfast(ctx, s.logDir, s.cfg.commit); err != nil {
			return err
		}
	}
	code := describeCode(binary, s.cfg.holdfast != "", s.cfg.commit)

	fmt.Fprintf(os.Stderr, "Starting a hub and %d targets with kube-controller-manager and %d simulated nodes each\n", s.cfg.clusters, s.cfg.nodes)
	s.fleet, err = localfleet.Up(ctx, localfleet.Options{Clusters: s.cfg.clusters, Nodes: s.cfg.nodes})
	if err != nil {
		return fmt.Errorf("starting the fleet: %w", err)
	}
	defer func() { retErr = errors.Join(retErr, s.fleet.Stop()) }()
	s.hub = s.fleet.HubClient()
	if err := s.buildTargets(); err != nil {
		return err
	}
	watchCtx, stopWatches := context.WithCancel(ctx)
	var watches sync.WaitGroup
	defer func() { stopWatches(); watches.Wait() }()
	for _, t := range s.targets {
		for _, k := range kinds {
			watches.Go(func() { s.tl.watchKind(watchCtx, t.name, t.dyn, k) })
		}
	}

	if err := s.declareServiceSet(ctx); err != nil {
		return err
	}
	s.ctrl = newControllerProc(binary, s.fleet.HubKubeconfigPath(), filepath.Join(s.logDir, "controller.log"))
	s.logs = &logScanner{path: s.ctrl.logPath}
	if err := s.ctrl.start(); err != nil {
		return err
	}
	defer func() {
		if err := s.ctrl.stop(); err != nil {
			retErr = errors.Join(retErr, err)
		}
	}()
	started := time.Now()
	if err := s.fleet.WaitClustersReady(ctx, s.cfg.startupTimeout); err != nil {
		return err
	}
	if ok, last := s.waitConverged(ctx, s.cfg.startupTimeout, ""); !ok {
		return fmt.Errorf("the first deployment did not converge within %s: %s", s.cfg.startupTimeout, strings.Join(last.problems(), "; "))
	}
	fmt.Fprintf(os.Stderr, "Deployed to %d clusters in %s; starting the faults\n", len(s.targets), time.Since(started).Round(time.Millisecond))

	pollCtx, stopPoll := context.WithCancel(ctx)
	s.records = newRecordBook()
	var poller sync.WaitGroup
	poller.Go(func() { s.records.poll(pollCtx, s.hub, s.fleet.Namespace) })
	poller.Go(func() { s.rss.run(pollCtx, s.ctrl.pid) })
	s.rss.take() // the first deployment is not part of round 1
	defer func() { stopPoll(); poller.Wait() }()

	soakStart := time.Now()
	end := soakStart.Add(s.cfg.duration)
	for time.Now().Before(end) && ctx.Err() == nil {
		s.rounds++
		roundEnd := time.Now().Add(s.cfg.round)
		if roundEnd.After(end) {
			roundEnd = end
		}
		if time.Until(roundEnd) < 10*time.Second {
			s.rounds--
			break
		}
		faultStart := time.Now()
		s.roundStart = faultStart
		s.faultPhase(ctx, roundEnd)
		s.faultTime += time.Since(faultStart)
		if ctx.Err() != nil {
			break
		}
		if err := s.settlePhase(ctx); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The last records: give every correctedTime its tolerance, then check them all.
	sleep(ctx, s.cfg.tolerance+2*time.Second)
	s.records.pollOnce(ctx, s.hub, s.fleet.Namespace)
	s.checkRecords(time.Now())
	s.checkExplained(time.Now())
	s.judgeRecordedOnce(time.Now())
	s.checkController()
	s.checkLeaks(ctx)
	s.endPeak, _ = s.rss.take()
	soakTime := time.Since(soakStart)

	fmt.Print(s.report(code, soakTime))
	return nil
}

func (s *soak) buildTargets() error {
	scheme, err := controller.Scheme()
	if err != nil {
		return err
	}
	for _, cp := range s.fleet.Targets {
		cfg := rest.CopyConfig(cp.RESTConfig())
		cfg.QPS, cfg.Burst = 100, 200
		// A stopped API server must fail requests fast, not hang them.
		cfg.Timeout = 20 * time.Second
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return fmt.Errorf("building a client of %s: %w", cp.Name(), err)
		}
		wcfg := rest.CopyConfig(cfg)
		wcfg.Timeout = 0
		dyn, err := dynamic.NewForConfig(wcfg)
		if err != nil {
			return fmt.Errorf("building a dynamic client of %s: %w", cp.Name(), err)
		}
		s.targets = append(s.targets, &target{name: cp.Name(), cp: cp, c: c, dyn: dyn, matched: true})
	}
	return nil
}

// declareServiceSet labels every Cluster as a member and creates the templates and the service set.
func (s *soak) declareServiceSet(ctx context.Context) error {
	for _, t := range s.targets {
		if err := s.setClusterLabel(ctx, t.name, memberLabel, ptr.To("true")); err != nil {
			return err
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hubNamespace}}
	if err := s.hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s on the hub: %w", hubNamespace, err)
	}
	for _, name := range []string{configTemplate, webTemplate} {
		tpl := &holdfastv1.ServiceTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: name},
			Spec:       holdfastv1.ServiceTemplateSpec{Inline: templateYAML(name, s.revs[name], s.sec)},
		}
		if err := s.hub.Create(ctx, tpl); err != nil {
			return fmt.Errorf("creating ServiceTemplate %s: %w", name, err)
		}
		s.revHistory = append(s.revHistory, revChange{at: time.Now(), template: name, rev: 0})
	}
	mcs := &holdfastv1.MultiClusterService{
		ObjectMeta: metav1.ObjectMeta{Name: serviceSetName},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{memberLabel: "true"}}},
			SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
			UnmatchPolicy:   holdfastv1.UnmatchWithdraw,
			DeletionPolicy:  holdfastv1.DeletionDelete,
			Services: []holdfastv1.Service{
				{Name: configService, Template: holdfastv1.TemplateReference{Name: configTemplate, Namespace: hubNamespace}, Namespace: appNamespace},
				// The config service declares the namespace; this one must not create it first
				// (a namespace found existing would be a Conflict for the declared one).
				{Name: webService, Template: holdfastv1.TemplateReference{Name: webTemplate, Namespace: hubNamespace}, Namespace: appNamespace, CreateNamespace: ptr.To(false)},
			},
			Drift: &holdfastv1.DriftPolicy{
				Action: holdfastv1.DriftActionCorrect,
				Fight:  &holdfastv1.FightPolicy{MaxCorrections: measure.FightMax},
			},
		},
	}
	if err := s.hub.Create(ctx, mcs); err != nil {
		return fmt.Errorf("creating MultiClusterService %s: %w", serviceSetName, err)
	}
	return nil
}

// setClusterLabel sets (value non-nil) or removes a label of a Cluster with a merge patch.
func (s *soak) setClusterLabel(ctx context.Context, cluster, key string, value *string) error {
	var v any
	if value != nil {
		v = *value
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: v}}})
	if err != nil {
		return err
	}
	hc := &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: s.fleet.Namespace, Name: cluster}}
	if err := s.hub.Patch(ctx, hc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("labelling Cluster %s: %w", cluster, err)
	}
	return nil
}

// declaredAt is the declaration of one template's objects at a revision.
func (s *soak) declaredAt(template string, rev int) declaration {
	if s.declCache[template] == nil {
		s.declCache[template] = map[int]declaration{}
	}
	if d, ok := s.declCache[template][rev]; ok {
		return d
	}
	all, err := declare(revisions{configTemplate: rev, webTemplate: rev}, s.sec)
	if err != nil {
		panic(err) // the templates are this program's own
	}
	d := declaration{}
	for r, obj := range all {
		if templateOf(r) == template {
			d[r] = obj
		}
	}
	s.declCache[template][rev] = d
	return d
}

// current is the declaration at the current revisions.
func (s *soak) current() declaration {
	d := declaration{}
	for _, t := range []string{configTemplate, webTemplate} {
		for r, obj := range s.declaredAt(t, s.revs[t]) {
			d[r] = obj
		}
	}
	return d
}

// logFault writes one line to faults.log.
func (s *soak) logFault(format string, args ...any) {
	fmt.Fprintf(s.faultW, "%s %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func (s *soak) violation(format string, args ...any) {
	v := fmt.Sprintf(format, args...)
	s.violations = append(s.violations, v)
	s.logFault("VIOLATION %s", v)
	fmt.Fprintf(os.Stderr, "VIOLATION: %s\n", v)
}

// describeCode says what the controller was built from: the commit and the uncommitted files.
func describeCode(binary string, prebuilt bool, commit string) string {
	if prebuilt {
		return "prebuilt binary " + binary
	}
	head, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "working tree (git unavailable)"
	}
	status, _ := exec.Command("git", "status", "--porcelain").Output()
	var files []string
	for line := range strings.Lines(string(status)) {
		if f := strings.TrimSpace(line); f != "" && !strings.HasSuffix(f, "test/soak/") {
			files = append(files, f)
		}
	}
	tree := "working tree at " + strings.TrimSpace(string(head))
	if len(files) > 0 {
		tree += fmt.Sprintf(" with %d changed or new paths besides test/soak (%s)", len(files), strings.Join(files, ", "))
	}
	if commit != "" {
		c, _ := exec.Command("git", "rev-parse", "--short", commit).Output()
		return fmt.Sprintf("controller built from commit %s (git archive, nothing uncommitted); this program and the CRDs it installs from the %s",
			strings.TrimSpace(string(c)), tree)
	}
	return "controller and CRDs from the " + tree
}

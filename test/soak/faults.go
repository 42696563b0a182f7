package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// Fault kinds, as counted.
const (
	fDriftConfigMap   = "drift: ConfigMap value edited"
	fDriftSecret      = "drift: Secret token edited"
	fDriftScale       = "drift: Deployment scaled"
	fDriftEnv         = "drift: Deployment env edited"
	fDriftImage       = "drift: Deployment image edited"
	fDriftServicePort = "drift: Service targetPort edited"
	fDriftLabel       = "drift: declared label changed"
	fDriftDelete      = "drift: object deleted"
	fDriftNamespace   = "drift: namespace deleted"
	fKill             = "controller SIGKILL (and restart)"
	fTargetOutage     = "target API server stop/start"
	fHubOutage        = "hub API server stop/start"
	fTemplate         = "template change (next revision)"
	fUnmatch          = "Cluster label: unmatched (withdraw)"
	fRematch          = "Cluster label: matched again"
	fTick             = "Cluster label: unrelated label changed"
	fToReport         = "drift action Correct -> Report"
	fToCorrect        = "drift action Report -> Correct"
	fRequestSet       = "correction request on the service set (Report mode)"
	fRequestStatus    = "correction request on one ClusterServiceStatus (Report mode)"
	fRoundRequest     = "correction request at the end of a Report round"
)

var faultOrder = []string{fDriftConfigMap, fDriftSecret, fDriftScale, fDriftEnv, fDriftImage, fDriftServicePort, fDriftLabel,
	fDriftDelete, fDriftNamespace, fKill, fTargetOutage, fHubOutage, fTemplate, fUnmatch, fRematch, fTick, fToReport, fToCorrect,
	fRequestSet, fRequestStatus, fRoundRequest, floodFault}

// weighted is one choice of the fault generator.
type weighted struct {
	weight float64
	do     func(ctx context.Context) (kind string, err error)
}

// errSkip says a fault's preconditions did not hold (no matched target up, the object is not
// there, ...): it is counted as skipped, not performed.
type errSkip struct{ why string }

func (e errSkip) Error() string { return e.why }

func skip(format string, args ...any) error { return errSkip{fmt.Sprintf(format, args...)} }

func (s *soak) faultPhase(ctx context.Context, until time.Time) {
	choices := []weighted{
		{3, s.driftConfigMap},
		{2, s.driftSecret},
		{1.5, s.driftScale},
		{1, s.driftEnv},
		{0.5, s.driftImage},
		{1, s.driftServicePort},
		{2, s.driftLabel},
		{3, s.driftDelete},
		{0.3, s.driftNamespace},
		{1.2, s.killController},
		{0.8, s.targetOutage},
		{0.25, s.hubOutage},
		{1.2, s.templateChange},
		{1.2, s.clusterLabel},
		{0.8, s.switchAction},
		{0.8, s.correctionRequest},
	}
	if s.rounds > warmupRounds && s.cfg.floodObjects > 0 {
		choices = append(choices, weighted{1.5, s.flood})
	}
	total := 0.0
	for _, c := range choices {
		total += c.weight
	}
	fmt.Fprintf(os.Stderr, "%s round %d: faults until %s (drift action %s)\n", time.Now().Format("15:04:05"), s.rounds, until.Format("15:04:05"), s.action)
	for time.Now().Before(until) && ctx.Err() == nil {
		s.restartControllerIfDue()
		x := s.rng.Float64() * total
		var pick weighted
		for _, c := range choices {
			if x < c.weight {
				pick = c
				break
			}
			x -= c.weight
		}
		if pick.do == nil {
			pick = choices[len(choices)-1]
		}
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		kind, err := pick.do(fctx)
		cancel()
		switch {
		case err == nil:
			s.faults.done(kind)
		case isSkip(err):
			s.faults.skipped(kind)
			s.logFault("skipped %s: %v", kind, err)
		default:
			s.faults.failed(kind)
			s.logFault("failed %s: %v", kind, err)
		}
		gap := s.cfg.gapMin + time.Duration(s.rng.Int64N(int64(s.cfg.gapMax-s.cfg.gapMin)+1))
		sleep(ctx, gap)
	}
	s.restartControllerIfDue()
}

func isSkip(err error) bool {
	_, ok := err.(errSkip)
	return ok
}

// pickTarget chooses a matched target whose API server is up.
func (s *soak) pickTarget() (*target, error) {
	var ok []*target
	for _, t := range s.targets {
		if t.matched && !t.isDown() {
			ok = append(ok, t)
		}
	}
	if len(ok) == 0 {
		return nil, skip("no matched target is up")
	}
	return ok[s.rng.IntN(len(ok))], nil
}

func (s *soak) hubIsDown() bool {
	s.hubMu.Lock()
	defer s.hubMu.Unlock()
	return s.hubDown
}

// recordEvent remembers a write this program made to a target, for the drift record check.
func (s *soak) recordEvent(e faultEvent) {
	s.eventsMu.Lock()
	defer s.eventsMu.Unlock()
	e.seq = len(s.events)
	s.events = append(s.events, e)
}

// outageBegins remembers that an API server (cluster "" for the hub's) is being stopped; the
// returned function marks it back. The recorded-once check needs every server up around a drift.
func (s *soak) outageBegins(cluster string) func() {
	s.eventsMu.Lock()
	defer s.eventsMu.Unlock()
	i := len(s.outages)
	s.outages = append(s.outages, outage{cluster: cluster, span: span{from: time.Now()}})
	return func() {
		s.eventsMu.Lock()
		defer s.eventsMu.Unlock()
		s.outages[i].to = time.Now()
	}
}

func key(name string) client.ObjectKey { return client.ObjectKey{Namespace: appNamespace, Name: name} }

// update reads an object, changes it and writes it back as the editor, retrying a conflict once.
func update[T client.Object](ctx context.Context, t *target, obj T, name string, change func(T) error) error {
	for attempt := 0; ; attempt++ {
		if err := t.c.Get(ctx, key(name), obj); err != nil {
			if apierrors.IsNotFound(err) {
				return skip("%s not on %s", name, t.name)
			}
			return err
		}
		if err := change(obj); err != nil {
			return err
		}
		err := t.c.Update(ctx, obj, client.FieldOwner(editor))
		if err == nil || !apierrors.IsConflict(err) || attempt > 0 {
			return err
		}
	}
}

func (s *soak) nextDrift() int { s.driftCount++; return s.driftCount }

func (s *soak) driftConfigMap(ctx context.Context) (string, error) {
	const kind = fDriftConfigMap
	t, err := s.pickTarget()
	if err != nil {
		return kind, err
	}
	var names []string
	for r := range s.current() {
		if r.Kind == kindConfigMap {
			names = append(names, r.Name)
		}
	}
	slices.Sort(names)
	name := names[s.rng.IntN(len(names))]
	// Keys every revision declares (never a revision's own key: see differences).
	keys := map[string][]string{"app-config": {"revision", "LOG_LEVEL"}, "app-flags": {"feature-a", "feature-b"}, "app-extra": {"note"}}[name]
	k := keys[s.rng.IntN(len(keys))]
	value := fmt.Sprintf("drifted-%d", s.nextDrift())
	at := time.Now()
	cm := &corev1.ConfigMap{}
	err = update(ctx, t, cm, name, func(cm *corev1.ConfigMap) error {
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[k] = value
		return nil
	})
	if err == nil {
		s.recordEvent(faultEvent{at: at, cluster: t.name, ref: objRef{kindConfigMap, name}, rv: parseRV(cm.ResourceVersion), kind: kind, manager: editor})
		s.logFault("%s: %s ConfigMap %s data.%s=%s (rv %s)", kind, t.name, name, k, value, cm.ResourceVersion)
	}
	return kind, err
}

func (s *soak) driftSecret(ctx context.Context) (string, error) {
	const kind = fDriftSecret
	t, err := s.pickTarget()
	if err != nil {
		return kind, err
	}
	value := s.sec.drifted(s.nextDrift())
	at := time.Now()
	sec := &corev1.Secret{}
	err = update(ctx, t, sec, "app-secret", func(sec *corev1.Secret) error {
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		sec.Data["token"] = []byte(value)
		return nil
	})
	if err == nil {
		s.recordEvent(faultEvent{at: at, cluster: t.name, ref: objRef{kindSecret, "app-secret"}, rv: parseRV(sec.ResourceVersion), kind: kind, manager: editor})
		s.logFault("%s: %s Secret app-secret data.token=<planted value %d> (rv %s)", kind, t.name, len(s.sec.issued), sec.ResourceVersion)
	}
	return kind, err
}

func (s *soak) driftScale(ctx context.Context) (string, error) {
	const kind = fDriftScale
	t, err := s.pickTarget()
	if err != nil {
		return kind, err
	}
	replicas := int32(1 + 2*s.rng.IntN(2)) // 1 or 3; 2 declared
	dep := &appsv1.Deployment{}
	if err := t.c.Get(ctx, key("web"), dep); err != nil {
		if apierrors.IsNotFound(err) {
			return kind, skip("web not on %s", t.name)
		}
		return kind, err
	}
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: appNamespace}, Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	at := time.Now()
	if err := t.c.SubResource("scale").Update(ctx, dep, client.WithSubResourceBody(scale), client.FieldOwner(editor)); err != nil {
		return kind, err
	}
	s.recordEvent(faultEvent{at: at, cluster: t.name, ref: objRef{kindDeployment, "web"}, rv: parseRV(scale.ResourceVersion), kind: kind, manager: editor})
	s.logFault("%s: %s Deployment web replicas=%d (rv %s)", kind, t.name, replicas, scale.ResourceVersion)
	s.nextDrift()
	return kind, nil
}

func (s *soak) driftEnv(ctx context.Context) (string, error) {
	const kind = fDriftEnv
	return kind, s.driftDeployment(ctx, kind, func(dep *appsv1.Deployment, n int) string {
		c := &dep.Spec.Template.Spec.Containers[0]
		v := fmt.Sprintf("drifted-%d", n)
		for i := range c.Env {
			if c.Env[i].Name == "REVISION" {
				c.Env[i].Value = v
				return "env REVISION=" + v
			}
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: "REVISION", Value: v})
		return "env REVISION=" + v + " (added)"
	})
}

func (s *soak) driftImage(ctx context.Context) (string, error) {
	const kind = fDriftImage
	return kind, s.driftDeployment(ctx, kind, func(dep *appsv1.Deployment, n int) string {
		img := "registry.k8s.io/pause:3.9"
		if n%2 == 0 {
			img = "registry.k8s.io/pause:3.8"
		}
		dep.Spec.Template.Spec.Containers[0].Image = img
		return "image=" + img
	})
}

func (s *soak) driftDeployment(ctx context.Context, kind string, change func(*appsv1.Deployment, int) string) error {
	t, err := s.pickTarget()
	if err != nil {
		return err
	}
	n := s.nextDrift()
	var what string
	at := time.Now()
	dep := &appsv1.Deployment{}
	err = update(ctx, t, dep, "web", func(dep *appsv1.Deployment) error {
		if len(dep.Spec.Template.Spec.Containers) == 0 {
			return skip("web on %s has no container", t.name)
		}
		what = change(dep, n)
		return nil
	})
	if err == nil {
		s.recordEvent(faultEvent{at: at, cluster: t.name, ref: objRef{kindDeployment, "web"}, rv: parseRV(dep.ResourceVersion), kind: kind, manager: editor})
		s.logFault("%s: %s Deployment web %s (rv %s)", kind, t.name, what, dep.ResourceVersion)
	}
	return err
}

func (s *soak) driftServicePort(ctx context.Context) (string, error) {
	const kind = fDriftServicePort
	t, err := s.pickTarget()
	if err != nil {
		return kind, err
	}
	port := 9000 + s.nextDrift()%1000
	at := time.Now()
	svc := &corev1.Service{}
	err = update(ctx, t, svc, "web", func(svc *corev1.Service) error {
		if len(svc.Spec.Ports) == 0 {
			return skip("Service web on %s has no port", t.name)
		}
		svc.Spec.Ports[0].TargetPort = intstr.FromInt32(int32(port))
		return nil
	})
	if err == nil {
		s.recordEvent(faultEvent{at: at, cluster: t.name, ref: objRef{kindService, "web"}, rv: parseRV(svc.ResourceVersion), kind: kind, manager: editor})
		s.logFault("%s: %s Service web targetPort=%d (rv %s)", kind, t.name, port, svc.ResourceVersion)
	}
	return kind, err
}

// driftLabel changes the value of a label the template declares, with a merge patch.
func (s *soak) driftLabel(ctx context.Context) (string, error) {
	const kind = fDriftLabel
	t, err := s.pickTarget()
	if err != nil {
		return kind, err
	}
	refs := s.current().refs()
	r := refs[s.rng.IntN(len(refs))]
	label := tierLabel
	if r.Kind == kindNamespace {
		label = partOfLabel
	}
	value := fmt.Sprintf("drifted-%d", s.nextDrift())
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{label: value}}})
	obj, err := s.typed(r)
	if err != nil {
		return kind, err
	}
	at := time.Now()
	if err := t.c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(editor)); err != nil {
		if apierrors.IsNotFound(err) {
			return kind, skip("%s not on %s", r, t.name)
		}
		return kind, err
	}
	s.recordEvent(faultEvent{at: at, cluster: t.name, ref: r, rv: parseRV(obj.GetResourceVersion()), kind: kind, manager: editor})
	s.logFault("%s: %s %s label %s=%s (rv %s)", kind, t.name, r, label, value, obj.GetResourceVersion())
	return kind, nil
}

// typed returns an empty typed object of a declared object, named.
func (s *soak) typed(r objRef) (client.Object, error) {
	var obj client.Object
	switch r.Kind {
	case kindNamespace:
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.Name}}, nil
	case kindConfigMap:
		obj = &corev1.ConfigMap{}
	case kindSecret:
		obj = &corev1.Secret{}
	case kindDeployment:
		obj = &appsv1.Deployment{}
	case kindService:
		obj = &corev1.Service{}
	default:
		return nil, fmt.Errorf("unknown kind %s", r.Kind)
	}
	obj.SetNamespace(appNamespace)
	obj.SetName(r.Name)
	return obj, nil
}

func (s *soak) driftDelete(ctx context.Context) (string, error) {
	const kind = fDriftDelete
	t, err := s.pickTarget()
	if err != nil {
		return kind, err
	}
	var refs []objRef
	for _, r := range s.current().refs() {
		if r.Kind != kindNamespace {
			refs = append(refs, r)
		}
	}
	r := refs[s.rng.IntN(len(refs))]
	obj, err := s.typed(r)
	if err != nil {
		return kind, err
	}
	at := time.Now()
	if err := t.c.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		if apierrors.IsNotFound(err) {
			return kind, skip("%s not on %s", r, t.name)
		}
		return kind, err
	}
	s.recordEvent(faultEvent{at: at, cluster: t.name, ref: r, deleted: true, kind: kind})
	s.logFault("%s: %s %s deleted", kind, t.name, r)
	s.nextDrift()
	return kind, nil
}

func (s *soak) driftNamespace(ctx context.Context) (string, error) {
	const kind = fDriftNamespace
	t, err := s.pickTarget()
	if err != nil {
		return kind, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNamespace}}
	at := time.Now()
	if err := t.c.Delete(ctx, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return kind, skip("namespace %s not on %s", appNamespace, t.name)
		}
		return kind, err
	}
	s.recordEvent(faultEvent{at: at, cluster: t.name, whole: true, deleted: true, kind: kind})
	s.logFault("%s: %s namespace %s deleted", kind, t.name, appNamespace)
	s.nextDrift()
	return kind, nil
}

// killController sends SIGKILL; the controller is started again 0-8 s later by the fault loop.
func (s *soak) killController(context.Context) (string, error) {
	const kind = fKill
	if !s.ctrl.isRunning() {
		return kind, skip("the controller is not running")
	}
	if err := s.ctrl.kill(); err != nil {
		return kind, err
	}
	delay := time.Duration(s.rng.Int64N(int64(8 * time.Second)))
	s.restartAt = time.Now().Add(delay)
	s.logFault("%s: killed; restart in %s", kind, delay.Round(time.Millisecond))
	return kind, nil
}

// restartControllerIfDue starts a killed controller once its delay passed, and one that exited
// on its own at once (that is a violation, recorded by checkController).
func (s *soak) restartControllerIfDue() {
	if s.ctrl.isRunning() || s.hubIsDown() {
		return
	}
	if !s.restartAt.IsZero() && time.Now().Before(s.restartAt) {
		return
	}
	if s.restartAt.IsZero() {
		s.logFault("the controller is not running and this program did not stop it; starting it again")
	}
	if err := s.ctrl.start(); err != nil {
		s.violation("starting the controller again: %v", err)
		return
	}
	s.restartAt = time.Time{}
	s.logFault("controller started (start #%d)", s.ctrl.starts)
}

// targetOutage stops a target's API server (and kube-controller-manager) and starts it again
// 3 s to -outage-max later, in the background.
func (s *soak) targetOutage(ctx context.Context) (string, error) {
	const kind = fTargetOutage
	for _, t := range s.targets {
		if t.isDown() {
			return kind, skip("%s is already down", t.name)
		}
	}
	t := s.targets[s.rng.IntN(len(s.targets))]
	outage := 3*time.Second + time.Duration(s.rng.Int64N(int64(s.cfg.outageMax-3*time.Second)+1))
	t.mu.Lock()
	t.down, t.done = true, make(chan struct{})
	done := t.done
	t.mu.Unlock()
	s.logFault("%s: %s stopping for %s", kind, t.name, outage.Round(time.Millisecond))
	back := s.outageBegins(t.name)
	go func() {
		defer close(done)
		if err := t.cp.StopAPIServer(); err != nil {
			s.logFault("stopping the API server of %s: %v", t.name, err)
		}
		sleep(ctx, outage)
		for attempt := 0; ; attempt++ {
			err := t.cp.StartAPIServer(context.WithoutCancel(ctx))
			if err == nil {
				break
			}
			s.logFault("starting the API server of %s (attempt %d): %v", t.name, attempt+1, err)
			if attempt >= 5 {
				return // stays down: waitTargetsUp reports it
			}
			time.Sleep(2 * time.Second)
		}
		s.logFault("%s: API server of %s is back", kind, t.name)
		back()
		t.mu.Lock()
		t.down = false
		t.mu.Unlock()
	}()
	return kind, nil
}

// hubOutage stops the hub's API server for 3-12 s, in the background. The controller is not
// started while it is down (a start needs the hub).
func (s *soak) hubOutage(ctx context.Context) (string, error) {
	const kind = fHubOutage
	if s.hubIsDown() {
		return kind, skip("the hub is already down")
	}
	// `holdfast controller` exits when it cannot reach the hub at start (the manager needs the
	// API's REST mappings), as controller-runtime programs do, for their Deployment to restart
	// them: not what invariant 3 is about, so the hub is not stopped around a start.
	if d := s.ctrl.runningFor(); d < 20*time.Second {
		return kind, skip("the controller is not running, or started less than 20s ago")
	}
	outage := 3*time.Second + time.Duration(s.rng.Int64N(int64(9*time.Second)))
	s.hubMu.Lock()
	s.hubDown, s.hubDone = true, make(chan struct{})
	done := s.hubDone
	s.hubMu.Unlock()
	s.logFault("%s: stopping for %s", kind, outage.Round(time.Millisecond))
	back := s.outageBegins("")
	go func() {
		defer close(done)
		if err := s.fleet.Hub.StopAPIServer(); err != nil {
			s.logFault("stopping the hub's API server: %v", err)
		}
		sleep(ctx, outage)
		for attempt := 0; ; attempt++ {
			err := s.fleet.Hub.StartAPIServer(context.WithoutCancel(ctx))
			if err == nil {
				break
			}
			s.logFault("starting the hub's API server (attempt %d): %v", attempt+1, err)
			if attempt >= 5 {
				return
			}
			time.Sleep(2 * time.Second)
		}
		s.logFault("%s: the hub's API server is back", kind)
		back()
		s.hubMu.Lock()
		s.hubDown = false
		s.hubMu.Unlock()
	}()
	return kind, nil
}

func (s *soak) templateChange(ctx context.Context) (string, error) {
	const kind = fTemplate
	if s.hubIsDown() {
		return kind, skip("the hub is down")
	}
	name := []string{configTemplate, webTemplate}[s.rng.IntN(2)]
	rev := s.revs[name] + 1
	tpl := &holdfastv1.ServiceTemplate{}
	at := time.Now()
	for attempt := 0; ; attempt++ {
		if err := s.hub.Get(ctx, client.ObjectKey{Namespace: hubNamespace, Name: name}, tpl); err != nil {
			return kind, err
		}
		tpl.Spec.Inline = templateYAML(name, rev, s.sec)
		err := s.hub.Update(ctx, tpl)
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) || attempt > 0 {
			return kind, err
		}
	}
	s.revs[name] = rev
	s.revHistory = append(s.revHistory, revChange{at: at, template: name, rev: rev})
	s.logFault("%s: %s revision %d", kind, name, rev)
	return kind, nil
}

// clusterLabel unmatches a matched cluster (keeping one matched), matches an unmatched one
// again, or changes a label no selector reads.
func (s *soak) clusterLabel(ctx context.Context) (string, error) {
	if s.hubIsDown() {
		return fTick, skip("the hub is down")
	}
	t := s.targets[s.rng.IntN(len(s.targets))]
	if s.rng.IntN(3) == 0 {
		v := strconv.Itoa(s.rng.IntN(1_000_000))
		if err := s.setClusterLabel(ctx, t.name, tickLabel, &v); err != nil {
			return fTick, err
		}
		s.logFault("%s: %s %s=%s", fTick, t.name, tickLabel, v)
		return fTick, nil
	}
	if !t.matched {
		if err := s.setClusterLabel(ctx, t.name, memberLabel, ptr.To("true")); err != nil {
			return fRematch, err
		}
		t.matched = true
		s.logFault("%s: %s", fRematch, t.name)
		return fRematch, nil
	}
	matched := 0
	for _, o := range s.targets {
		if o.matched {
			matched++
		}
	}
	if matched < 2 {
		return fUnmatch, skip("%s is the only matched cluster", t.name)
	}
	at := time.Now()
	if err := s.setClusterLabel(ctx, t.name, memberLabel, nil); err != nil {
		return fUnmatch, err
	}
	t.matched = false
	s.recordEvent(faultEvent{at: at, cluster: t.name, whole: true, deleted: true, kind: fUnmatch})
	s.logFault("%s: %s", fUnmatch, t.name)
	return fUnmatch, nil
}

func (s *soak) switchAction(ctx context.Context) (string, error) {
	next, kind := holdfastv1.DriftActionReport, fToReport
	if s.action == holdfastv1.DriftActionReport {
		next, kind = holdfastv1.DriftActionCorrect, fToCorrect
	}
	if s.hubIsDown() {
		return kind, skip("the hub is down")
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"drift": map[string]any{"action": next}}})
	mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: serviceSetName}}
	if err := s.hub.Patch(ctx, mcs, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return kind, err
	}
	s.action = next
	s.logFault("%s (generation %d)", kind, mcs.Generation)
	return kind, nil
}

// correctionRequest sets holdfast.dev/reconcile-requested-at, in Report mode, on the service set
// or on one matched cluster's status object, as `holdfast correct` does.
func (s *soak) correctionRequest(ctx context.Context) (string, error) {
	if s.action != holdfastv1.DriftActionReport {
		return fRequestSet, skip("drift action is %s", s.action)
	}
	if s.hubIsDown() {
		return fRequestSet, skip("the hub is down")
	}
	if s.rng.IntN(3) == 0 {
		t, err := s.pickTarget()
		if err != nil {
			return fRequestStatus, err
		}
		css := &holdfastv1.ClusterServiceStatus{ObjectMeta: metav1.ObjectMeta{Namespace: s.fleet.Namespace, Name: naming.StatusName(serviceSetName, t.name)}}
		v, err := s.request(ctx, css)
		if err == nil {
			s.logFault("%s: %s %s", fRequestStatus, t.name, v)
		} else if apierrors.IsNotFound(err) {
			err = skip("no status object for %s yet", t.name)
		}
		return fRequestStatus, err
	}
	v, err := s.request(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: serviceSetName}})
	if err == nil {
		s.logFault("%s: %s", fRequestSet, v)
	}
	return fRequestSet, err
}

// request patches a new value of the reconcile-requested-at annotation onto obj.
func (s *soak) request(ctx context.Context, obj client.Object) (string, error) {
	s.requestSeq++
	v := fmt.Sprintf("%s-soak-%d", time.Now().UTC().Format(time.RFC3339Nano), s.requestSeq)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{holdfastv1.ReconcileRequestedAtAnnotation: v}}})
	return v, s.hub.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}

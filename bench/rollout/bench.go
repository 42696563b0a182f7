package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/naming"
)

// bench is the fleet, the controller and this program's watches.
type bench struct {
	*measure.SimFleet
	cfg      config
	arrivals *arrivals
	// waves are the simulated clusters of each wave.
	waves [][]string
	// idealRev is the revision the ideal rollout applied last.
	idealRev int
}

// configMapName is the i-th ConfigMap of a set's template.
func configMapName(set string, i int) string { return fmt.Sprintf("%s-%02d", set, i) }

// manifests is a set's template at revision rev: cfg.objects ConfigMaps, each in the namespace
// named after the cluster.
func (b *bench) manifests(set string, rev int) string {
	d := measure.NewDocs("")
	for i := range b.cfg.objects {
		d.Add(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: "{{ .Cluster.Name }}"
  labels:
    %s: %s
data:
  %s: "%d"
  LOG_LEVEL: info
`, configMapName(set, i), setLabel, set, revKey, rev)
	}
	return d.String()
}

// deploy creates both sets' templates at revision 1 and their service sets, and waits until
// every status object of both is Ready in sync; then the ideal rollout creates its objects.
func (b *bench) deploy(ctx context.Context) (time.Duration, error) {
	for _, set := range []string{allSet, wavesSet} {
		if err := b.CreateTemplate(ctx, templateNamespace, set, b.manifests(set, 1), measure.GoTemplate); err != nil {
			return 0, err
		}
	}
	b.expect(allSet, wavesSet)
	created := time.Now()
	for _, set := range []string{allSet, wavesSet} {
		if err := b.createServiceSet(ctx, set); err != nil {
			return 0, err
		}
	}
	if _, err := b.WaitStatuses(ctx, b.cfg.timeout, measure.ReadyInSync(b.cfg.objects)); err != nil {
		return 0, fmt.Errorf("waiting for the first revision: %w", err)
	}
	took := time.Since(created)
	if _, err := b.idealRollout(ctx, b.Sims); err != nil {
		return 0, err
	}
	return took, nil
}

// expect makes the status objects of sets those WaitStatuses waits for.
func (b *bench) expect(sets ...string) {
	clear(b.Statuses)
	for _, set := range sets {
		for _, s := range b.Sims {
			b.Statuses[naming.StatusName(set, s)] = s
		}
	}
}

// createServiceSet creates set's service set on every simulated cluster; the waves set rolls out
// in waves (spec.rollout from -max-in-flight and -pause).
func (b *bench) createServiceSet(ctx context.Context, set string) error {
	return b.CreateSimServiceSet(ctx, set, holdfastv1.TemplateReference{Name: set, Namespace: templateNamespace}, func(mcs *holdfastv1.MultiClusterService) {
		if set == wavesSet {
			mcs.Spec.Rollout = &holdfastv1.RolloutStrategy{WaveLabel: waveLabel, MaxInFlight: &b.cfg.maxInFlight}
			if b.cfg.pause > 0 {
				mcs.Spec.Rollout.PauseBetweenWaves = &metav1.Duration{Duration: b.cfg.pause}
			}
		}
	})
}

// idealRollout applies the ideal's objects at its next revision to sims
// (measure.SimFleet.IdealRollout, cfg.concurrency workers).
func (b *bench) idealRollout(ctx context.Context, sims []string) (time.Duration, error) {
	b.idealRev++
	objs, err := measure.IdealObjects(b.manifests(allSet, b.idealRev), setLabel)
	if err != nil {
		return 0, err
	}
	return b.IdealRollout(ctx, sims, objs, b.cfg.concurrency)
}

// quiet waits cfg.settle, then until the controller sent nothing for a second.
func (b *bench) quiet() {
	time.Sleep(b.cfg.settle)
	b.Counter.WaitQuiet(time.Second, time.Minute)
}

// round makes the four changes, each alone: the ideal at once, the baseline (the "all" set at
// revision rev), the ideal in waves, the waves (the "waves" set at revision rev).
func (b *bench) round(ctx context.Context, rev int) (*round, error) {
	r := &round{}
	var err error
	b.quiet()
	fmt.Fprintf(os.Stderr, "revision %d: ideal change at once\n", rev)
	if r.idealAll, err = b.idealRollout(ctx, b.Sims); err != nil {
		return nil, err
	}
	b.quiet()
	fmt.Fprintf(os.Stderr, "revision %d: baseline (set %s, no waves)\n", rev, allSet)
	if r.all, err = b.change(ctx, allSet, rev); err != nil {
		return nil, err
	}
	b.quiet()
	fmt.Fprintf(os.Stderr, "revision %d: ideal change in waves\n", rev)
	b.idealRev++
	objs, err := measure.IdealObjects(b.manifests(allSet, b.idealRev), setLabel)
	if err != nil {
		return nil, err
	}
	for _, wave := range b.waves {
		took, err := b.IdealRollout(ctx, wave, objs, b.cfg.concurrency)
		if err != nil {
			return nil, err
		}
		r.idealWaves = append(r.idealWaves, took)
	}
	b.quiet()
	fmt.Fprintf(os.Stderr, "revision %d: waves (set %s)\n", rev, wavesSet)
	if r.waves, err = b.change(ctx, wavesSet, rev); err != nil {
		return nil, err
	}
	return r, nil
}

// change is one template change of set to revision rev and what was seen of it.
type change struct {
	// began is when the template's update returned.
	began time.Time
	// given, applied and ready are when each cluster's status object was given a new
	// spec.revision (the waves set only: the rollout reached the cluster), when the cluster had
	// every ConfigMap at rev on its target, and when its status object was Ready in sync at it.
	given, applied, ready map[string]time.Time
	// rollout is what status.rollout said (the waves set only).
	rollout  *rolloutTimes
	requests measure.RequestCounts
	cpu      measure.CPUTimes
}

// change updates set's template to revision rev and waits until every cluster has it on its
// target and in its status object (Ready in sync at a new service revision), and for the waves
// set until status.rollout is Complete.
func (b *bench) change(ctx context.Context, set string, rev int) (*change, error) {
	ctx, cancel := context.WithCancel(ctx) // ends the watches if the change fails
	defer cancel()
	before, beforeSpec, err := b.revisions(ctx)
	if err != nil {
		return nil, err
	}
	b.expect(set)
	mcs := &holdfastv1.MultiClusterService{}
	if err := b.Hub.Get(ctx, client.ObjectKey{Name: set}, mcs); err != nil {
		return nil, fmt.Errorf("reading MultiClusterService %s: %w", set, err)
	}
	var wg sync.WaitGroup
	var rt *rolloutTimes
	var rtErr error
	if set == wavesSet {
		if mcs.Status.Rollout == nil || mcs.Status.Rollout.Phase != holdfastv1.RolloutComplete {
			return nil, fmt.Errorf("MultiClusterService %s: the rollout before is not Complete: %+v", set, mcs.Status.Rollout)
		}
		opened := make(chan struct{})
		wg.Go(func() {
			rt, rtErr = watchRollout(ctx, b.Watcher, set, mcs.Status.Rollout.Revision, len(b.waves), b.cfg.timeout, opened)
		})
		select {
		case <-opened:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// The status objects' watch is open before the change, so that each is seen as it changes.
	c := &change{given: map[string]time.Time{}}
	var ready map[string]time.Time
	var readyErr error
	listed := make(chan struct{})
	wg.Go(func() {
		ready, readyErr = b.WatchStatuses(ctx, b.cfg.timeout, func(css *holdfastv1.ClusterServiceStatus) bool {
			if _, seen := c.given[css.Name]; !seen && css.Spec.Revision != beforeSpec[css.Name] {
				c.given[css.Name] = time.Now()
			}
			return measure.ReadyInSync(b.cfg.objects)(css) && len(css.Status.Services) == 1 &&
				css.Status.Services[0].Revision != before[css.Name]
		}, func() { close(listed) })
	})
	select {
	case <-listed:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	tpl := &holdfastv1.ServiceTemplate{}
	if err := b.Hub.Get(ctx, types.NamespacedName{Namespace: templateNamespace, Name: set}, tpl); err != nil {
		return nil, fmt.Errorf("reading ServiceTemplate %s: %w", set, err)
	}
	tpl.Spec.Inline = b.manifests(set, rev)
	b.Counter.Reset()
	cpu0 := b.CPU()
	if err := b.Hub.Update(ctx, tpl); err != nil {
		return nil, fmt.Errorf("changing ServiceTemplate %s: %w", set, err)
	}
	c.began = time.Now()
	wg.Wait()
	if readyErr != nil {
		return nil, fmt.Errorf("waiting for the status objects of %s: %w", set, readyErr)
	}
	if rtErr != nil {
		return nil, rtErr
	}
	c.ready = map[string]time.Time{}
	for name, at := range ready {
		c.ready[b.Statuses[name]] = at
	}
	given := map[string]time.Time{}
	for name, at := range c.given {
		given[b.Statuses[name]] = at
	}
	c.given = given
	if c.applied, err = b.arrivals.wait(ctx, set, strconv.Itoa(rev), b.Sims, b.cfg.timeout); err != nil {
		return nil, err
	}
	c.rollout = rt
	c.cpu = b.CPU().Minus(cpu0)
	c.requests = b.Counter.Reset()
	return c, nil
}

// revisions are the status objects' service revisions now, and their spec.revision (the
// rollout's), by name.
func (b *bench) revisions(ctx context.Context) (service, spec map[string]string, _ error) {
	list := &holdfastv1.ClusterServiceStatusList{}
	if err := b.Hub.List(ctx, list, client.InNamespace(b.Fleet.Namespace)); err != nil {
		return nil, nil, fmt.Errorf("listing status objects: %w", err)
	}
	service, spec = map[string]string{}, map[string]string{}
	for _, css := range list.Items {
		if len(css.Status.Services) == 1 {
			service[css.Name] = css.Status.Services[0].Revision
		}
		spec[css.Name] = css.Spec.Revision
	}
	return service, spec, nil
}

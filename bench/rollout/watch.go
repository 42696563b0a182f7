package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/measure"
)

// What this program watches: the ConfigMaps on the targets (arrivals: when a cluster had every
// ConfigMap of a service set at a revision) and the rollout set's status.rollout on the hub
// (rolloutWatch: when each wave started and was reported healthy).

// arrivals records, per service set, simulated cluster and revision, when this program's watch
// of the targets first saw every one of the set's ConfigMaps there at that revision (data.rev).
type arrivals struct {
	objects int
	mu      sync.Mutex
	// revs is each ConfigMap's data.rev as last seen, by set and cluster, then by name.
	revs map[setCluster]map[string]string
	at   map[setCluster]map[string]time.Time
}

// setCluster is a service set's objects on one simulated cluster.
type setCluster struct{ set, cluster string }

func newArrivals(objects int) *arrivals {
	return &arrivals{objects: objects, revs: map[setCluster]map[string]string{}, at: map[setCluster]map[string]time.Time{}}
}

// start watches the ConfigMaps labelled setLabel on one API server.
func (a *arrivals) start(ctx context.Context, cs kubernetes.Interface) error {
	return measure.ConfigMapInformer(ctx, cs, setLabel, toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { a.see(obj) },
		UpdateFunc: func(_, obj any) { a.see(obj) },
	}, revKey)
}

func (a *arrivals) see(obj any) {
	now := time.Now()
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return
	}
	k, rev := setCluster{set: cm.Labels[setLabel], cluster: cm.Namespace}, cm.Data[revKey]
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.revs[k] == nil {
		a.revs[k], a.at[k] = map[string]string{}, map[string]time.Time{}
	}
	a.revs[k][cm.Name] = rev
	if _, seen := a.at[k][rev]; seen {
		return
	}
	n := 0
	for _, r := range a.revs[k] {
		if r == rev {
			n++
		}
	}
	if n == a.objects {
		a.at[k][rev] = now
	}
}

// wait waits until every cluster had the set's ConfigMaps at rev, and returns when each did.
func (a *arrivals) wait(ctx context.Context, set, rev string, clusters []string, timeout time.Duration) (map[string]time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		a.mu.Lock()
		at := map[string]time.Time{}
		for _, c := range clusters {
			if t, ok := a.at[setCluster{set: set, cluster: c}][rev]; ok {
				at[c] = t
			}
		}
		a.mu.Unlock()
		if len(at) == len(clusters) {
			return at, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("this program's watch saw %d of %d clusters with every ConfigMap of %s at revision %s", len(at), len(clusters), set, rev)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rolloutTimes are what the rollout set's status.rollout said, and when this program saw it.
type rolloutTimes struct {
	// revision is the revision rolled out (the ControllerRevision's name).
	revision string
	// started is when status.rollout.wave was first seen at or past each wave, healthy when
	// the wave was first reported with every cluster healthy.
	started, healthy []time.Time
	// complete is when phase Complete was first seen.
	complete time.Time
	// phases are the phases seen, in order, each once in a row.
	phases []holdfastv1.RolloutPhase
}

// watchRollout watches MultiClusterService name until its status.rollout is Complete at a
// revision other than old, and returns what it saw; it closes opened once its watch is open.
// Each wave's start and health are recorded as first seen, also when one status update reports
// several (a wave healthy and the next started).
func watchRollout(ctx context.Context, w client.WithWatch, name, old string, waves int, timeout time.Duration, opened chan<- struct{}) (*rolloutTimes, error) {
	var once sync.Once
	defer once.Do(func() { close(opened) })
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rt := &rolloutTimes{started: make([]time.Time, waves), healthy: make([]time.Time, waves)}
	see := func(mcs *holdfastv1.MultiClusterService) bool {
		now := time.Now()
		ro := mcs.Status.Rollout
		if ro == nil || ro.Revision == old {
			return false
		}
		rt.revision = ro.Revision
		if len(rt.phases) == 0 || rt.phases[len(rt.phases)-1] != ro.Phase {
			rt.phases = append(rt.phases, ro.Phase)
		}
		for i := range min(waves, int(ro.Wave)+1) {
			if rt.started[i].IsZero() {
				rt.started[i] = now
			}
		}
		for i, ws := range ro.Waves {
			if i < waves && rt.healthy[i].IsZero() && ws.Clusters > 0 && ws.Healthy == ws.Clusters {
				rt.healthy[i] = now
			}
		}
		if ro.Phase == holdfastv1.RolloutComplete {
			for i := range waves {
				if rt.healthy[i].IsZero() {
					rt.healthy[i] = now
				}
			}
			rt.complete = now
			return true
		}
		return false
	}
	key := client.ObjectKey{Name: name}
	for {
		mcs := &holdfastv1.MultiClusterService{}
		if err := w.Get(ctx, key, mcs); err != nil {
			if ctx.Err() != nil {
				return rt, fmt.Errorf("waiting for the rollout of %s (phases seen %v): %w", name, rt.phases, err)
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if see(mcs) {
			return rt, nil
		}
		wi, err := w.Watch(ctx, &holdfastv1.MultiClusterServiceList{},
			&client.ListOptions{Raw: &metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: mcs.ResourceVersion}})
		if err != nil {
			if ctx.Err() != nil {
				return rt, fmt.Errorf("waiting for the rollout of %s (phases seen %v): %w", name, rt.phases, err)
			}
			continue
		}
		once.Do(func() { close(opened) })
		for ev := range wi.ResultChan() {
			if ev.Type == watch.Error {
				break
			}
			if m, ok := ev.Object.(*holdfastv1.MultiClusterService); ok && see(m) {
				wi.Stop()
				return rt, nil
			}
		}
		wi.Stop()
		if err := ctx.Err(); err != nil {
			return rt, fmt.Errorf("waiting for the rollout of %s (phases seen %v): %w", name, rt.phases, err)
		}
	}
}

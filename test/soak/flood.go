package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// The flood: anyone allowed to create objects on a target may label them as Holdfast's and
// weigh them down with holdfast.dev/* annotations (issue 27, finding 2). It must cost the
// controller a bounded amount of memory, so the flood fault starts only after the rounds whose
// peak is invariant 3's baseline, and from then on the baseline must hold.
const (
	floodFault     = "flood: labelled objects with large holdfast.dev/* annotations"
	floodNamespace = "soak-flood"
	// floodOwner is the owner label the flood's objects claim: no service set of this name
	// exists, so none of the checks, which select the soak's service set, counts them.
	floodOwner = "soak-flood"
	// floodAnnotation is the size of one flood object's annotation: with -flood-objects (1,000)
	// per target, 96 MiB a target that a controller keeping such annotations holds in memory.
	floodAnnotation = 96 << 10
	// floodBatch is how many objects one fault creates, or rewrites once a target has its share.
	floodBatch = 200
)

// flood starts, in the background, a batch of floodBatch ConfigMaps on a random target whose
// API server is up, each labelled holdfast.dev/managed-by=holdfast with a floodAnnotation-byte
// holdfast.dev/ annotation, in namespace soak-flood; once the target holds -flood-objects of
// them, the batch rewrites that many with new annotations instead (update churn, each a watch
// event the controller must look at). One batch runs at a time, so that the other faults go on
// at their pace while it does.
func (s *soak) flood(ctx context.Context) (string, error) {
	s.floodMu.Lock()
	busy := s.flooding
	s.flooding = true
	s.floodMu.Unlock()
	if busy {
		return floodFault, skip("a flood batch is still running")
	}
	t, err := s.floodTarget(ctx)
	if err != nil {
		s.floodMu.Lock()
		s.flooding = false
		s.floodMu.Unlock()
		return floodFault, err
	}
	go func() {
		s.floodBatch(context.WithoutCancel(ctx), t)
		s.floodMu.Lock()
		s.flooding = false
		s.floodMu.Unlock()
	}()
	return floodFault, nil
}

// floodTarget picks a target whose API server is up and makes sure it has the flood's namespace.
func (s *soak) floodTarget(ctx context.Context) (*target, error) {
	var up []*target
	for _, t := range s.targets {
		if !t.isDown() {
			up = append(up, t)
		}
	}
	if len(up) == 0 {
		return nil, skip("no target's API server is up")
	}
	t := up[s.rng.IntN(len(up))]
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: floodNamespace}}
	if err := t.c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s on %s: %w", floodNamespace, t.name, err)
	}
	return t, nil
}

// floodBatch writes one batch of flood objects to t; a write that fails (its API server went
// away) ends the batch, and what was made counts.
func (s *soak) floodBatch(ctx context.Context, t *target) {
	s.floodMu.Lock()
	if s.floodCount == nil {
		s.floodCount = map[string]int{}
	}
	first := s.floodCount[t.name]
	s.floodGen++
	gen := s.floodGen
	rewrite := first >= s.cfg.floodObjects
	if rewrite {
		first = s.rng.IntN(max(s.cfg.floodObjects-floodBatch, 0) + 1)
	}
	s.floodMu.Unlock()

	done := 0
	for i := first; i < first+floodBatch && (rewrite || i < s.cfg.floodObjects); i++ {
		// Every object's annotation is its own: equal strings could be held once.
		fill := strings.Repeat(fmt.Sprintf("%05d%07x", i, gen%(1<<28)), floodAnnotation/12)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("flood-%05d", i), Namespace: floodNamespace,
			Labels:      map[string]string{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue, holdfastv1.OwnerLabel: floodOwner},
			Annotations: map[string]string{"holdfast.dev/flood": fill},
		}, Data: map[string]string{"gen": fmt.Sprint(gen)}}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		var err error
		if rewrite {
			err = t.c.Update(wctx, cm, client.FieldOwner("soak-flood")) // unconditional: no resourceVersion
		} else if err = t.c.Create(wctx, cm); apierrors.IsAlreadyExists(err) {
			err = nil
		}
		cancel()
		if err != nil {
			s.logFault("%s: writing to %s: %v", floodFault, t.name, err)
			break
		}
		done++
	}
	s.floodMu.Lock()
	if !rewrite {
		s.floodCount[t.name] = max(s.floodCount[t.name], first+done)
	}
	there := s.floodCount[t.name]
	s.floodMu.Unlock()
	verb := "created"
	if rewrite {
		verb = "rewrote"
	}
	s.logFault("%s: %s %d objects on %s (%d there)", floodFault, verb, done, t.name, there)
}

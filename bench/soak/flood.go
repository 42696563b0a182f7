package main

import (
	"context"
	"fmt"
	"strings"

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
	floodBatch = 100
)

// flood creates floodBatch ConfigMaps on a random target whose API server is up, each labelled
// holdfast.dev/managed-by=holdfast with a floodAnnotation-byte holdfast.dev/ annotation, in
// namespace soak-flood; once the target holds -flood-objects of them, it rewrites a batch with
// new annotations instead (update churn, each a watch event the controller must look at).
func (s *soak) flood(ctx context.Context) (string, error) {
	if s.rounds <= warmupRounds || s.cfg.floodObjects <= 0 {
		return floodFault, skip("the flood starts after the %d rounds of the memory baseline", warmupRounds)
	}
	var up []*target
	for _, t := range s.targets {
		if !t.isDown() {
			up = append(up, t)
		}
	}
	if len(up) == 0 {
		return floodFault, skip("no target's API server is up")
	}
	t := up[s.rng.IntN(len(up))]
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: floodNamespace}}
	if err := t.c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return floodFault, fmt.Errorf("creating namespace %s on %s: %w", floodNamespace, t.name, err)
	}
	s.floodMu.Lock()
	if s.floodCount == nil {
		s.floodCount = map[string]int{}
	}
	first := s.floodCount[t.name]
	s.floodGen++
	gen := s.floodGen
	s.floodMu.Unlock()
	rewrite := first >= s.cfg.floodObjects
	if rewrite {
		first = s.rng.IntN(max(s.cfg.floodObjects-floodBatch, 0) + 1)
	}
	fill := strings.Repeat(fmt.Sprintf("%08x", gen), floodAnnotation/8)
	done := 0
	for i := first; i < first+floodBatch && (rewrite || i < s.cfg.floodObjects); i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("flood-%05d", i), Namespace: floodNamespace,
			Labels:      map[string]string{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue, holdfastv1.OwnerLabel: floodOwner},
			Annotations: map[string]string{"holdfast.dev/flood": fill},
		}, Data: map[string]string{"gen": fmt.Sprint(gen)}}
		var err error
		if rewrite {
			err = t.c.Patch(ctx, cm, client.Apply, client.FieldOwner("soak-flood"), client.ForceOwnership)
		} else if err = t.c.Create(ctx, cm); apierrors.IsAlreadyExists(err) {
			err = nil
		}
		if err != nil {
			if done == 0 {
				return floodFault, fmt.Errorf("flooding %s: %w", t.name, err)
			}
			break // the API server went away mid-batch: what was made counts
		}
		done++
	}
	if !rewrite {
		s.floodMu.Lock()
		s.floodCount[t.name] = max(s.floodCount[t.name], first+done)
		s.floodMu.Unlock()
	}
	verb := "created"
	if rewrite {
		verb = "rewrote"
	}
	s.logFault("%s: %s %d objects on %s (%d there)", floodFault, verb, done, t.name, max(first+done, s.floodCount[t.name]))
	return floodFault, nil
}

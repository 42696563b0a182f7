package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/onboard"
)

// idealWork is the Secret the ideal publishes each cluster's objects in, in its hub namespace.
const idealWork = "ideal-work"

// idealRun is how long the ideal took: publishing the declarations on the hub (Pull mode only)
// and the applies.
type idealRun struct{ publish, apply time.Duration }

func (i idealRun) total() time.Duration { return i.publish + i.apply }

// ideal runs the ideal of revision rev, alone: in Pull mode it first publishes each cluster's
// objects (b.manifests, as measure.IdealObjects renames them, in the cluster's namespace) as one
// Secret in the cluster's hub namespace, one forced apply each, with the controller's number of
// workers; then, in both modes, it applies them to every cluster
// (measure.SimFleet.IdealRollout).
func (b *bench) ideal(ctx context.Context, rev int) (idealRun, error) {
	var run idealRun
	objs, err := measure.IdealObjects(b.manifests(rev))
	if err != nil {
		return run, err
	}
	if b.pull {
		began := time.Now()
		err := measure.Parallel(ctx, b.cfg.concurrency, len(b.Sims), func(ctx context.Context, i int) error {
			sim := b.Sims[i]
			own := make([]map[string]any, 0, len(objs))
			for _, o := range objs {
				c := o.DeepCopy()
				c.SetNamespace(sim)
				own = append(own, c.Object)
			}
			data, err := json.Marshal(own)
			if err != nil {
				return err
			}
			secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Namespace: onboard.PullNamespace(sim), Name: idealWork},
				Data:       map[string][]byte{"objects": data}}
			body, err := json.Marshal(secret)
			if err != nil {
				return err
			}
			_, err = b.hubCS.CoreV1().Secrets(secret.Namespace).Patch(ctx, idealWork, types.ApplyPatchType, body,
				metav1.PatchOptions{FieldManager: measure.IdealRolloutManager, Force: new(true)})
			if err != nil {
				return fmt.Errorf("publishing the ideal's objects of %s: %w", sim, err)
			}
			return nil
		})
		if err != nil {
			return run, err
		}
		run.publish = time.Since(began)
	}
	if run.apply, err = b.IdealRollout(ctx, b.Sims, objs, b.cfg.concurrency); err != nil {
		return run, err
	}
	return run, nil
}

package measure

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The ideal controller is the least any drift controller's rollout must do (issue 32), measured
// on the same API servers in the same run: for each simulated cluster, one label-selected watch
// of what it deploys (opened before its applies and read until the rollout ends), one forced
// server-side apply per object, and one status write on the hub, as a status object per
// (service set, cluster) would be. Nothing is rendered, compared or recorded beyond that. Its
// objects are IdealObjects named with IdealControllerPrefix instead and labelled
// IdealControllerLabel, which only its own watches select.

// IdealControllerLabel marks the ideal controller's objects; its watches select it.
const IdealControllerLabel = "bench.holdfast.dev/ideal-controller"

// IdealControllerPrefix starts the names of the ideal controller's objects.
const IdealControllerPrefix = "floor-"

// IdealStatusNamespace is the hub namespace of the ideal controller's status writes: a
// ConfigMap per simulated cluster, named after it.
const IdealStatusNamespace = "default"

// IdealController rolls objs out to sims as the ideal controller (see above), with workers
// clusters at a time, round naming the rollout in its status writes. It returns the wall time
// until the last cluster's status was written; the watches end with it.
func (f *SimFleet) IdealController(ctx context.Context, sims []string, objs []*unstructured.Unstructured, workers int, round string) (time.Duration, error) {
	watchCtx, stop := context.WithCancel(ctx)
	var watching sync.WaitGroup
	defer func() {
		stop()
		watching.Wait()
	}()
	labelled := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		labelled[i] = o.DeepCopy()
		labels := labelled[i].GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[IdealControllerLabel] = "true"
		labelled[i].SetLabels(labels)
		// Its own objects, not the ideal rollout's: created by its first rollout, as Holdfast's.
		labelled[i].SetName(IdealControllerPrefix + strings.TrimPrefix(o.GetName(), IdealPrefix))
	}
	// The hub as a controller would write to it, with no client-side limit (the program's own
	// hub client has client-go's default of 5 requests a second).
	hubCfg := rest.CopyConfig(f.Fleet.Hub.RESTConfig())
	hubCfg.QPS, hubCfg.Burst = -1, 0
	hub, err := client.New(hubCfg, client.Options{})
	if err != nil {
		return 0, fmt.Errorf("ideal controller: building its hub client: %w", err)
	}
	began := time.Now()
	opts := metav1.PatchOptions{FieldManager: IdealRolloutManager, Force: new(true)}
	err = Parallel(ctx, workers, len(sims), func(ctx context.Context, i int) error {
		sim := sims[i]
		cs := f.Clientsets[f.Server[sim]]
		w, err := cs.CoreV1().ConfigMaps(sim).Watch(watchCtx, metav1.ListOptions{LabelSelector: IdealControllerLabel})
		if err != nil {
			return fmt.Errorf("ideal controller: watching cluster %s: %w", sim, err)
		}
		watching.Go(func() {
			defer w.Stop()
			for {
				select {
				case <-watchCtx.Done():
					return
				case _, ok := <-w.ResultChan():
					if !ok {
						return
					}
				}
			}
		})
		for _, o := range labelled {
			obj := o.DeepCopy()
			obj.SetNamespace(sim)
			if err := applyIdeal(ctx, cs, obj, opts); err != nil {
				return fmt.Errorf("ideal controller: %w", err)
			}
		}
		status := corev1ac.ConfigMap("ideal-status-"+sim, IdealStatusNamespace).
			WithData(map[string]string{"round": round, "objects": fmt.Sprint(len(labelled)), "time": time.Now().UTC().Format(time.RFC3339Nano)})
		if err := hub.Apply(ctx, status, client.FieldOwner(IdealRolloutManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("ideal controller: writing the status of cluster %s on the hub: %w", sim, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return time.Since(began), nil
}

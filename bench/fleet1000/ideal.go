package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"

	"holdfast.dev/holdfast/bench/internal/measure"
)

// The ideal rollout is the floor of a rollout on these API servers, measured in the same run:
// the template's objects sent to every simulated cluster as one forced server-side apply each,
// by as many workers as the controller has, with nothing read, compared or recorded. Its objects
// are named idealPrefix plus the template's names, in the clusters' namespaces, and carry no
// fleetLabel, so that neither this program's watches nor the ideal corrector see them; nor does
// the controller, whose caches on the targets select the objects it manages.

const (
	// idealRolloutManager is the ideal rollout's field manager.
	idealRolloutManager = "bench-ideal-rollout"
	// idealPrefix starts the names of the ideal rollout's objects, so that they never collide
	// with Holdfast's.
	idealPrefix = "ideal-"
)

// idealObjects are the template's objects at revision rev (b.manifests) as the ideal rollout
// applies them: renamed with idealPrefix, without fleetLabel; their namespace is set per cluster.
func (b *bench) idealObjects(rev int) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(b.manifests(rev)), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the template at revision %d: %w", rev, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		obj.SetName(idealPrefix + obj.GetName())
		labels := obj.GetLabels()
		delete(labels, fleetLabel)
		if len(labels) == 0 {
			labels = nil
		}
		obj.SetLabels(labels)
		objs = append(objs, obj)
	}
}

// idealRollout applies the template's objects at revision rev to every simulated cluster, with
// the controller's number of workers in total, each taking one cluster at a time and applying
// its objects one after the other through the admin client of the cluster's API server. It
// returns the wall time until the last apply returned and the CPU time used meanwhile.
func (b *bench) idealRollout(ctx context.Context, rev int) (time.Duration, cpuTimes, error) {
	objs, err := b.idealObjects(rev)
	if err != nil {
		return 0, cpuTimes{}, err
	}
	cpu0 := b.cpu()
	began := time.Now()
	err = measure.Parallel(ctx, b.cfg.concurrency, len(b.sims), func(ctx context.Context, i int) error {
		sim := b.sims[i]
		cs := b.Clientsets[b.serverOf[sim]]
		for _, o := range objs {
			obj := o.DeepCopy()
			obj.SetNamespace(sim)
			if err := applyIdeal(ctx, cs, obj); err != nil {
				return err
			}
		}
		return nil
	})
	took, cpu := time.Since(began), b.cpu().minus(cpu0)
	if err != nil {
		return 0, cpuTimes{}, fmt.Errorf("ideal rollout of revision %d: %w", rev, err)
	}
	return took, cpu, nil
}

// applyIdeal sends obj as one forced server-side apply, as the controller does
// (client.ApplyConfigurationFromUnstructured with ForceOwnership), through the typed client of
// its kind: the template declares ConfigMaps, Secrets and a ServiceAccount.
func applyIdeal(ctx context.Context, cs kubernetes.Interface, obj *unstructured.Unstructured) error {
	body, err := obj.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encoding %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	opts := metav1.PatchOptions{FieldManager: idealRolloutManager, Force: new(true)}
	core := cs.CoreV1()
	switch obj.GetKind() {
	case "ConfigMap":
		_, err = core.ConfigMaps(ns).Patch(ctx, name, types.ApplyPatchType, body, opts)
	case "Secret":
		_, err = core.Secrets(ns).Patch(ctx, name, types.ApplyPatchType, body, opts)
	case "ServiceAccount":
		_, err = core.ServiceAccounts(ns).Patch(ctx, name, types.ApplyPatchType, body, opts)
	default:
		return fmt.Errorf("the ideal rollout does not apply %s %s/%s", obj.GetKind(), ns, name)
	}
	if err != nil {
		return fmt.Errorf("applying %s %s/%s: %w", obj.GetKind(), ns, name, err)
	}
	return nil
}

package measure

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
)

// The ideal rollout is the floor of a rollout on a simulated fleet's API servers, measured in
// the same run: a template's objects sent to simulated clusters as one forced server-side apply
// each, with nothing read, compared or recorded. Its objects are named IdealPrefix plus the
// template's names, in the clusters' namespaces, and carry none of the labels the benchmark's
// watches select, so that neither they nor the controller (whose caches on the targets select
// what it manages) see them.

const (
	// IdealRolloutManager is the ideal rollout's field manager.
	IdealRolloutManager = "bench-ideal-rollout"
	// IdealPrefix starts the names of the ideal rollout's objects, so that they never collide
	// with Holdfast's.
	IdealPrefix = "ideal-"
)

// IdealObjects are the objects of manifests (a multi-document YAML of ConfigMaps, Secrets and
// ServiceAccounts) as the ideal rollout applies them: renamed with IdealPrefix, without the
// labels drop; their namespace is set per cluster.
func IdealObjects(manifests string, drop ...string) ([]*unstructured.Unstructured, error) {
	objs, err := Objects(manifests)
	if err != nil {
		return nil, fmt.Errorf("reading the ideal rollout's manifests: %w", err)
	}
	for _, obj := range objs {
		obj.SetName(IdealPrefix + obj.GetName())
		labels := obj.GetLabels()
		for _, l := range drop {
			delete(labels, l)
		}
		if len(labels) == 0 {
			labels = nil
		}
		obj.SetLabels(labels)
	}
	return objs, nil
}

// Objects are the objects of a multi-document YAML.
func Objects(manifests string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// IdealRollout applies objs to each of the simulated clusters sims, with workers in total, each
// taking one cluster at a time and applying its objects one after the other through the admin
// client of the cluster's API server. It returns the wall time until the last apply returned.
func (f *SimFleet) IdealRollout(ctx context.Context, sims []string, objs []*unstructured.Unstructured, workers int) (time.Duration, error) {
	return f.idealApplies(ctx, sims, objs, workers, IdealRolloutManager, nil)
}

// IdealDryRun is IdealRollout as server-side dry runs (the floor of a preview), under the field
// manager manager: the API servers default, validate and admit each object and persist nothing.
func (f *SimFleet) IdealDryRun(ctx context.Context, sims []string, objs []*unstructured.Unstructured, workers int, manager string) (time.Duration, error) {
	return f.idealApplies(ctx, sims, objs, workers, manager, []string{metav1.DryRunAll})
}

func (f *SimFleet) idealApplies(ctx context.Context, sims []string, objs []*unstructured.Unstructured, workers int, manager string, dryRun []string) (time.Duration, error) {
	began := time.Now()
	opts := metav1.PatchOptions{FieldManager: manager, Force: new(true), DryRun: dryRun}
	err := Parallel(ctx, workers, len(sims), func(ctx context.Context, i int) error {
		sim := sims[i]
		cs := f.Clientsets[f.Server[sim]]
		for _, o := range objs {
			obj := o.DeepCopy()
			obj.SetNamespace(sim)
			if err := applyIdeal(ctx, cs, obj, opts); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("ideal rollout: %w", err)
	}
	return time.Since(began), nil
}

// applyIdeal sends obj as one forced server-side apply, as the controller does
// (client.ApplyConfigurationFromUnstructured with ForceOwnership), through the typed client of
// its kind.
func applyIdeal(ctx context.Context, cs kubernetes.Interface, obj *unstructured.Unstructured, opts metav1.PatchOptions) error {
	body, err := obj.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encoding %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	ns, name := obj.GetNamespace(), obj.GetName()
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

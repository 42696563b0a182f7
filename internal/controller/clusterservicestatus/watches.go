package clusterservicestatus

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
)

// watchInventory makes sure every kind in the inventory is watched on the cluster, so a change
// to a managed object brings this status object back at once: in every namespace when the
// cluster's identity may, else in each namespace the status object deploys that kind to
// (drift.Watches.EnsureIn); cluster-scoped kinds it may not watch are left to full reconciles.
// What is watched less than everywhere is noted, for the Drifted condition (watchNotes).
func (r *Reconciler) watchInventory(ctx context.Context, s *scope) {
	key := types.NamespacedName{Namespace: s.cluster.Namespace, Name: s.cluster.Name}
	namespaces := map[schema.GroupVersionKind][]string{}
	var kinds []schema.GroupVersionKind
	for _, rs := range s.resources {
		gvk := schema.GroupVersionKind{Group: rs.Group, Version: rs.Version, Kind: rs.Kind}
		if rs.Desired == "" || rs.State == holdfastv1.ResourceConflict {
			continue
		}
		if _, ok := namespaces[gvk]; !ok {
			kinds = append(kinds, gvk)
		}
		if !slices.Contains(namespaces[gvk], rs.Namespace) {
			namespaces[gvk] = append(namespaces[gvk], rs.Namespace)
		}
	}
	var notes []string
	for _, gvk := range kinds {
		if err := r.watchKind(ctx, s, key, gvk, namespaces[gvk], &notes); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Cannot watch managed objects; drift is found at the next full reconcile", "kind", gvk.String())
			notes = append(notes, fmt.Sprintf("changes to %s are found at full reconciles only (%v)", gvk.Kind, err))
		}
	}
	if note := r.Applied.Note(key); note != "" && len(kinds) > 0 {
		notes = append(notes, note)
	}
	r.memory.setWatchNotes(client.ObjectKeyFromObject(s.css), s.css.Spec.Cluster, notes)
}

// liveCopy returns, for a correction on the cluster of s, the drifted object as its watch
// received it (drift.LiveCopies), so the correction need not read it again.
func (r *Reconciler) liveCopy(s *scope) func(apply.Ref) *unstructured.Unstructured {
	cluster := types.NamespacedName{Namespace: s.cluster.Namespace, Name: s.cluster.Name}
	return func(ref apply.Ref) *unstructured.Unstructured {
		return r.watches.Live.Take(cluster, ref.GroupVersionKind(), ref.Namespace, ref.Name)
	}
}

// watchKind watches gvk everywhere, or in namespaces when the cluster's identity may not.
func (r *Reconciler) watchKind(ctx context.Context, s *scope, key types.NamespacedName, gvk schema.GroupVersionKind, namespaces []string, notes *[]string) error {
	mapping, err := s.conn.Cluster().GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("finding the resource of %s: %w", gvk.Kind, err)
	}
	everywhere, err := s.conn.MayWatchEverywhere(ctx, mapping.Resource)
	if err != nil {
		return err
	}
	if everywhere {
		return r.watches.Ensure(ctx, key, s.conn.Cluster().GetCache(), gvk)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		*notes = append(*notes, fmt.Sprintf("changes to %s are found at full reconciles only: the cluster's identity may not watch them", gvk.Kind))
		return nil
	}
	dyn, err := s.conn.Dynamic()
	if err != nil {
		return err
	}
	src := drift.NamespacedSource{Cache: s.conn.Cluster().GetCache(), Client: dyn, Done: s.conn.Done(),
		Selector: labels.SelectorFromSet(labels.Set{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue})}
	for _, ns := range namespaces {
		if err := r.watches.EnsureIn(ctx, key, src, gvk, mapping.Resource, ns); err != nil {
			return err
		}
	}
	*notes = append(*notes, fmt.Sprintf("%s watched in namespace %s only (the cluster's identity may not watch it everywhere)",
		gvk.Kind, strings.Join(namespaces, ", ")))
	return nil
}

package apply

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// listPageSize bounds each page when listing live objects.
const listPageSize = 500

type listKey struct {
	gvk       schema.GroupVersionKind
	namespace string
}

// readLive reads the live objects of items cheaply: where two or more objects share a kind and
// namespace, one List selected by Options.Labels returns all of those Holdfast still labels.
// Objects not found that way (new ones, relabelled ones, single ones, and corrections: see
// Options.Corrections) are read with a GET when they are applied, except those a List by
// Options.ClaimSelector did not return and that need no reading (see there). An object applied
// before that the List does not return is always read: it may have been replaced by one without
// Holdfast's labels, which is a change, not a deletion. Reads never count against "nothing
// written when nothing changed".
func (r *run) readLive(ctx context.Context, items []*item) {
	if len(r.listLabels()) == 0 || r.opts.Corrections {
		return
	}
	assumeAbsent := len(r.opts.ClaimSelector) > 0 && !r.opts.DryRun
	groups := map[listKey][]*item{}
	var order []listKey
	for _, it := range items {
		if it.done {
			continue
		}
		k := listKey{gvk: it.ref.GroupVersionKind(), namespace: it.ref.Namespace}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], it)
	}
	for _, k := range order {
		g := groups[k]
		// A List pays when it replaces two GETs or more, or tells what was applied before from
		// what is gone without reading either. Objects never applied are read with a GET when
		// Options.Foreign must judge them (unless the List returns them).
		pays := len(g) >= 2 || (assumeAbsent && r.opts.Foreign == nil && !slices.ContainsFunc(g, r.inPrevious))
		if !pays || ctx.Err() != nil {
			continue
		}
		found, err := r.list(ctx, k)
		if err != nil {
			// Not fatal: every object of the group is read with a GET instead.
			ctrl.LoggerFrom(ctx).V(1).Info("Listing live objects failed, reading them one by one", "kind", k.gvk.String(), "namespace", k.namespace, "error", err.Error())
			continue
		}
		var unread []*item
		for _, it := range g {
			if live, ok := found[it.ref.Name]; ok {
				it.live, it.liveKnown = live, true
			} else if assumeAbsent && r.opts.Foreign == nil && !r.inPrevious(it) {
				it.live, it.liveKnown = nil, true
			} else if assumeAbsent && !r.inPrevious(it) {
				unread = append(unread, it)
			}
		}
		r.readAbsent(ctx, k, unread)
	}
}

// maxNamePages bounds the pages of names readAbsent lists in one kind and namespace: beyond
// that, GETs of the few new objects cost less than the names of everything else.
const maxNamePages = 2

// readAbsent learns which of items, new objects the List by Options.ClaimSelector did not
// return and that Options.Foreign must judge if they exist, do not exist: when two or more
// share k, one List of the names of every object of k (metadata only, through the Applier's
// name lister) replaces a GET each, which in a first rollout would all answer Not Found. The
// objects it names are still read with a GET, whole, for Foreign.
func (r *run) readAbsent(ctx context.Context, k listKey, items []*item) {
	if len(items) < 2 || r.a.names == nil || ctx.Err() != nil {
		return
	}
	present := map[string]bool{}
	cont := ""
	for page := 0; ; page++ {
		if page == maxNamePages {
			return // every object of items is read with a GET
		}
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		opts := []client.ListOption{client.Limit(listPageSize), client.Continue(cont)}
		if k.namespace != "" {
			opts = append(opts, client.InNamespace(k.namespace))
		}
		if err := r.a.names.List(ctx, l, opts...); err != nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Listing names failed, reading new objects one by one", "kind", k.gvk.String(), "namespace", k.namespace, "error", err.Error())
			return
		}
		for i := range l.Items {
			present[l.Items[i].Name] = true
		}
		if cont = l.GetContinue(); cont == "" {
			break
		}
	}
	for _, it := range items {
		if !present[it.ref.Name] {
			it.live, it.liveKnown = nil, true
		}
	}
}

// list returns the live objects of k carrying Options.Labels, by name.
func (r *run) list(ctx context.Context, k listKey) (map[string]*unstructured.Unstructured, error) {
	found := map[string]*unstructured.Unstructured{}
	cont := ""
	for {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		opts := []client.ListOption{client.MatchingLabels(r.listLabels()), client.Limit(listPageSize), client.Continue(cont)}
		if k.namespace != "" {
			opts = append(opts, client.InNamespace(k.namespace))
		}
		if err := r.a.client.List(ctx, l, opts...); err != nil {
			return nil, fmt.Errorf("listing %s: %w", k.gvk.Kind, err)
		}
		for i := range l.Items {
			found[l.Items[i].GetName()] = &l.Items[i]
		}
		if cont = l.GetContinue(); cont == "" {
			return found, nil
		}
	}
}

// listLabels selects the live objects to list: Options.ClaimSelector, or else Options.Labels.
func (r *run) listLabels() map[string]string {
	if len(r.opts.ClaimSelector) > 0 {
		return r.opts.ClaimSelector
	}
	return r.opts.Labels
}

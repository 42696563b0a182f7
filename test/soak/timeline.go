package main

import (
	"context"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// gvrs are the resources of the declared kinds.
var gvrs = map[string]schema.GroupVersionResource{
	kindNamespace:  {Version: "v1", Resource: "namespaces"},
	kindConfigMap:  {Version: "v1", Resource: "configmaps"},
	kindSecret:     {Version: "v1", Resource: "secrets"},
	kindDeployment: {Group: "apps", Version: "v1", Resource: "deployments"},
	kindService:    {Version: "v1", Resource: "services"},
}

// observation is one version of an object as this program's own watch on a target delivered
// it: at is when it arrived (after the write), rv the etcd revision of the write (of the
// deletion, for a deletion).
type observation struct {
	at     time.Time
	rv     int64
	exists bool
	uid    string
	obj    map[string]any // normalized; nil for a deletion
}

// clusterObj names an object on one target.
type clusterObj struct {
	cluster string
	ref     objRef
}

// span is a time interval in which a watch of this program may have missed changes.
type span struct{ from, to time.Time }

// timeline is every version of the objects in appNamespace (and of the Namespace itself) that
// this program's watches on the targets delivered, so that a drift record can be checked
// against what the cluster held when the record says it was corrected.
type timeline struct {
	mu   sync.Mutex
	objs map[clusterObj][]observation
	// gaps are the intervals per cluster and kind in which the watch had to list again
	// (410 Gone after an API server restart): changes inside one may be missing.
	gaps map[string][]span
	open map[string]time.Time
}

func newTimeline() *timeline {
	return &timeline{objs: map[clusterObj][]observation{}, gaps: map[string][]span{}, open: map[string]time.Time{}}
}

func gapKey(cluster, kind string) string { return cluster + "/" + kind }

func (t *timeline) add(cluster string, ref objRef, o observation) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := clusterObj{cluster, ref}
	obs := t.objs[k]
	if n := len(obs); n > 0 && obs[n-1].rv == o.rv && obs[n-1].exists == o.exists {
		return
	}
	t.objs[k] = append(obs, o)
}

// observations returns a copy of an object's history.
func (t *timeline) observations(cluster string, ref objRef) []observation {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]observation(nil), t.objs[clusterObj{cluster, ref}]...)
}

func (t *timeline) gapOpened(cluster, kind string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.open[gapKey(cluster, kind)]; !ok {
		t.open[gapKey(cluster, kind)] = at
	}
}

func (t *timeline) gapClosed(cluster, kind string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := gapKey(cluster, kind)
	if from, ok := t.open[k]; ok {
		t.gaps[k] = append(t.gaps[k], span{from, at})
		delete(t.open, k)
	}
}

// gapOverlaps says whether the watch of kind on cluster may have missed a change in [from, to].
func (t *timeline) gapOverlaps(cluster, kind string, from, to time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := gapKey(cluster, kind)
	if open, ok := t.open[k]; ok && !open.After(to) {
		return true
	}
	for _, g := range t.gaps[k] {
		if !g.from.After(to) && !g.to.Before(from) {
			return true
		}
	}
	return false
}

func parseRV(rv string) int64 {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// watchKind lists and watches one kind on one target until ctx ends: every version delivered
// goes into the timeline. A watch that ends is resumed from the last revision seen, so nothing is
// missed; only when the API server no longer has that revision (410 Gone, typically after it
// restarted) does it list again, and the time until the list is recorded as a gap.
func (t *timeline) watchKind(ctx context.Context, cluster string, dyn dynamic.Interface, kind string) {
	var res dynamic.ResourceInterface
	opts := metav1.ListOptions{}
	if kind == kindNamespace {
		res = dyn.Resource(gvrs[kind])
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", appNamespace).String()
	} else {
		res = dyn.Resource(gvrs[kind]).Namespace(appNamespace)
	}
	t.gapOpened(cluster, kind, time.Now())
	known := map[string]bool{}
	for ctx.Err() == nil {
		list, err := res.List(ctx, opts)
		if err != nil {
			sleep(ctx, time.Second)
			continue
		}
		now := time.Now()
		listRV := parseRV(list.GetResourceVersion())
		seen := map[string]bool{}
		for i := range list.Items {
			t.record(cluster, kind, &list.Items[i], true, now)
			seen[list.Items[i].GetName()] = true
		}
		for name := range known {
			if !seen[name] {
				// Deleted while the watch was down: the revision of the deletion is unknown,
				// the list's is an upper bound.
				t.add(cluster, objRef{kind, name}, observation{at: now, rv: listRV})
			}
		}
		known = seen
		t.gapClosed(cluster, kind, now)
		rv := list.GetResourceVersion()
		// endedAt is when the last watch ended: every change before it was delivered.
		endedAt := now
		for ctx.Err() == nil {
			wopts := opts
			wopts.ResourceVersion, wopts.AllowWatchBookmarks = rv, true
			w, err := res.Watch(ctx, wopts)
			if err != nil {
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					break
				}
				sleep(ctx, 500*time.Millisecond)
				continue
			}
			expired := false
			for ev := range w.ResultChan() {
				switch ev.Type {
				case watch.Error:
					if st, ok := ev.Object.(*metav1.Status); ok && (st.Code == 410 || st.Reason == metav1.StatusReasonExpired || st.Reason == metav1.StatusReasonGone) {
						expired = true
					}
				case watch.Bookmark:
					if u, ok := ev.Object.(*unstructured.Unstructured); ok {
						rv = u.GetResourceVersion()
					}
				case watch.Added, watch.Modified, watch.Deleted:
					u, ok := ev.Object.(*unstructured.Unstructured)
					if !ok {
						continue
					}
					exists := ev.Type != watch.Deleted
					t.record(cluster, kind, u, exists, time.Now())
					if exists {
						known[u.GetName()] = true
					} else {
						delete(known, u.GetName())
					}
					rv = u.GetResourceVersion()
				}
			}
			w.Stop()
			endedAt = time.Now()
			if expired {
				break
			}
		}
		t.gapOpened(cluster, kind, endedAt)
	}
}

func (t *timeline) record(cluster, kind string, u *unstructured.Unstructured, exists bool, at time.Time) {
	o := observation{at: at, rv: parseRV(u.GetResourceVersion()), exists: exists, uid: string(u.GetUID())}
	if exists {
		obj, err := normalize(u.Object)
		if err != nil {
			return
		}
		o.obj = obj
	}
	t.add(cluster, objRef{kind, u.GetName()}, o)
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

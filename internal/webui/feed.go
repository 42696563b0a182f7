package webui

import (
	"net/url"
	"slices"
	"strings"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview"
)

// historyLimit bounds the drift records the feed shows; the page says how many matched.
const historyLimit = 200

// driftFilter is the drift feed's query. Cluster is "namespace/name" or a name; Author matches
// a field manager; Kind an object's kind. An object (Object set) narrows the feed to its
// timeline.
type driftFilter struct {
	Cluster    string
	ServiceSet string
	Author     string
	Kind       string
	Object     *objectKey
}

// objectKey names one managed object on one cluster, for its timeline.
type objectKey struct {
	Cluster, ServiceSet          string
	Group, Kind, Namespace, Name string
}

func parseDriftFilter(q url.Values) driftFilter {
	f := driftFilter{Cluster: strings.TrimSpace(q.Get("cluster")), ServiceSet: q.Get("set"), Author: strings.TrimSpace(q.Get("author")), Kind: strings.TrimSpace(q.Get("kind"))}
	if q.Get("name") != "" {
		f.Object = &objectKey{Cluster: f.Cluster, ServiceSet: f.ServiceSet, Group: q.Get("group"), Kind: f.Kind, Namespace: q.Get("namespace"), Name: q.Get("name")}
	}
	return f
}

// viewFilter is the part of f the hub's read model narrows by.
func (f driftFilter) viewFilter() fleetview.Filter {
	out := fleetview.Filter{ServiceSet: f.ServiceSet}
	if ns, name, ok := strings.Cut(f.Cluster, "/"); ok {
		out.ClusterNamespace, out.Cluster = ns, name
	} else {
		out.Cluster = f.Cluster
	}
	return out
}

func (f driftFilter) matches(l fleetview.Location, o fleetview.ObjectRef, d *fleetview.Drift) bool {
	if f.Kind != "" && !strings.EqualFold(o.Kind, f.Kind) {
		return false
	}
	if f.Author != "" && (d == nil || !strings.Contains(strings.ToLower(d.Author()), strings.ToLower(f.Author))) {
		return false
	}
	if k := f.Object; k != nil && (o.Group != k.Group || o.Namespace != k.Namespace || o.Name != k.Name) {
		return false
	}
	return true
}

// driftPage is the drift feed, or an object's timeline when Object is set.
type driftPage struct {
	Filter  driftFilter
	Object  *objectKey
	Sets    []string
	Waiting []feedItem
	History []feedItem
	// Total is how many records matched; History holds at most historyLimit of them.
	Total int
}

// feedItem is a drift, current (State set) or recorded.
type feedItem struct {
	fleetview.Location
	Object fleetview.ObjectRef
	// State is the object's state now for a current drift (Drifted, Missing, Contested,
	// Uncorrectable); empty for a record.
	State   string
	Message string
	Drift   *fleetview.Drift
	// Author says who made the change: field manager (operation/subresource), or unknown.
	Author string
	// Action is the button a current drift gets: "Correct now", "Resume" or none.
	Action string
	// TimelineLink is the object's timeline.
	TimelineLink string
}

// Actions on a current drift.
const (
	actionCorrect = "Correct now"
	actionResume  = "Resume"
)

// buildDrift makes the drift feed from the hub's status objects.
func buildDrift(statuses []holdfastv1.ClusterServiceStatus, sets []string, f driftFilter) driftPage {
	page := driftPage{Filter: f, Object: f.Object, Sets: sets}
	vf := f.viewFilter()
	for _, it := range fleetview.BuildDriftList(statuses, vf, false).Items {
		if !f.matches(it.Location, it.Object, it.Drift) {
			continue
		}
		item := newFeedItem(it.Location, it.Object, it.Drift)
		item.State, item.Message = it.State, it.Message
		item.Action = actionCorrect
		if it.State == string(holdfastv1.ResourceContested) {
			item.Action = actionResume
		}
		page.Waiting = append(page.Waiting, item)
	}
	for _, e := range fleetview.BuildDriftHistory(statuses, vf, time.Time{}, 0).Items {
		if !f.matches(e.Location, e.Object, &e.Drift) {
			continue
		}
		page.Total++
		if len(page.History) < historyLimit {
			page.History = append(page.History, newFeedItem(e.Location, e.Object, &e.Drift))
		}
	}
	return page
}

func newFeedItem(l fleetview.Location, o fleetview.ObjectRef, d *fleetview.Drift) feedItem {
	item := feedItem{Location: l, Object: o, Drift: d, Author: "unknown"}
	if d != nil {
		item.Author = d.Author()
	}
	q := url.Values{"cluster": {l.ClusterNamespace + "/" + l.Cluster}, "set": {l.ServiceSet}, "group": {o.Group}, "kind": {o.Kind},
		"namespace": {o.Namespace}, "name": {o.Name}}
	item.TimelineLink = "/drift?" + q.Encode()
	return item
}

// statusSets are the service sets the status objects belong to, sorted.
func statusSets(statuses []holdfastv1.ClusterServiceStatus) []string {
	var out []string
	for i := range statuses {
		out = append(out, statuses[i].Spec.MultiClusterService)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

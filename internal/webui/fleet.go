package webui

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/fleetview"
)

// DriftState is what the fleet matrix says of a service set's drift on a cluster.
type DriftState string

// Drift states, the most pressing first.
const (
	// DriftContested: another field manager keeps reverting Holdfast's corrections.
	DriftContested DriftState = "Contested"
	// DriftWaiting: drift was found and, by policy (action Report), waits for a human.
	DriftWaiting DriftState = "Waiting for a human"
	// DriftCorrecting: objects are drifted and being put back.
	DriftCorrecting DriftState = "Correcting"
	// DriftCorrected: every drift recorded was put back.
	DriftCorrected DriftState = "Corrected"
	// DriftNone: no drift recorded.
	DriftNone DriftState = "None"
)

// driftStateOf is the one place that decides a pair's DriftState, from its conditions, its
// objects' states and its drift records.
func driftStateOf(css *holdfastv1.ClusterServiceStatus) DriftState {
	if c := conditions.Get(css, holdfastv1.ContestedCondition); c != nil && c.Status == metav1.ConditionTrue {
		return DriftContested
	}
	if c := conditions.Get(css, holdfastv1.DriftedCondition); c != nil && c.Status == metav1.ConditionTrue {
		return DriftWaiting
	}
	for _, r := range css.Status.Resources {
		if drift.Unresolved(r.State) {
			if r.State == holdfastv1.ResourceContested {
				return DriftContested
			}
			return DriftCorrecting
		}
	}
	for _, d := range css.Status.Drifts {
		if d.CorrectedTime != nil {
			return DriftCorrected
		}
	}
	return DriftNone
}

// Fleet matrix state filters.
const (
	stateAll       = ""
	stateNotReady  = "not-ready"
	stateDrifted   = "drifted"
	stateWaiting   = "waiting"
	stateContested = "contested"
)

// stateFilters are the choices of the fleet's state filter, in the order the form lists them.
var stateFilters = []option{
	{stateAll, "any state"}, {stateNotReady, "not Ready"}, {stateDrifted, "drifted now"},
	{stateWaiting, "waiting for a human"}, {stateContested, "Contested"},
}

// option is one choice of a select element.
type option struct{ Value, Label string }

// fleetFilter is the fleet view's query: a label selector on Clusters, a service set and a
// state.
type fleetFilter struct {
	Labels     string
	ServiceSet string
	State      string
}

func parseFleetFilter(q url.Values) fleetFilter {
	return fleetFilter{Labels: strings.TrimSpace(q.Get("labels")), ServiceSet: q.Get("set"), State: q.Get("state")}
}

// matches reports whether a cell passes the state filter.
func (f fleetFilter) matches(c cell) bool {
	switch f.State {
	case stateNotReady:
		return c.Present && c.Ready != string(metav1.ConditionTrue)
	case stateDrifted:
		return c.Drift == DriftWaiting || c.Drift == DriftContested || c.Drift == DriftCorrecting
	case stateWaiting:
		return c.Drift == DriftWaiting
	case stateContested:
		return c.Drift == DriftContested
	}
	return true
}

// fleetPage is the fleet view.
type fleetPage struct {
	Filter      fleetFilter
	FilterError string
	States      []option
	// AllSets are every service set (the filter's choices); Sets the columns shown.
	AllSets []setColumn
	Sets    []setColumn
	Rows    []clusterRow
	// Summary counts what is shown.
	Summary string
}

// setColumn is a service set.
type setColumn struct {
	Name string
	// Readable is false for a service set known only from its status objects (the user may not
	// read MultiClusterServices, or it is a tenant's ServiceSet): it then has no pause button.
	Readable bool
	Paused   bool
	// Ready is the service set's own Ready condition reason and message.
	Ready, Reason, Message string
	// PreviewLink is its Preview page, when its rollout holds a revision for approval or has a
	// preview; Phase is the rollout's phase and AwaitsApproval whether it holds one.
	PreviewLink    string
	Phase          string
	AwaitsApproval bool
}

// clusterRow is a Cluster and its cells, one per column.
type clusterRow struct {
	Namespace, Name string
	Labels          string
	// Connected is the Cluster's Connected condition status, Message why not.
	Connected, Message string
	Cells              []cell
}

// cell is a service set on a cluster. Present is false when the set is not deployed there.
type cell struct {
	Present bool
	Set     string
	// Ready, Reason and Message are the status object's Ready condition.
	Ready, Reason, Message string
	// Health is the status object's Healthy condition: Healthy, Unhealthy, or Unknown.
	Health string
	Drift  DriftState
	Paused bool
	// Drifted counts the objects not as declared now.
	Drifted int32
	// LastChange is the newer of the last apply and the last drift detected.
	LastChange *time.Time
	// DriftLink is the drift feed narrowed to this pair.
	DriftLink string
}

// buildFleet makes the fleet view from the hub's objects: a column per service set, those the
// status objects name included. An invalid label selector is reported
// in FilterError, and then every cluster is shown.
func buildFleet(clusters []holdfastv1.Cluster, sets []holdfastv1.MultiClusterService, statuses []holdfastv1.ClusterServiceStatus, f fleetFilter) fleetPage {
	page := fleetPage{Filter: f, States: stateFilters}
	selector := labels.Everything()
	if f.Labels != "" {
		s, err := labels.Parse(f.Labels)
		if err != nil {
			page.FilterError = fmt.Sprintf("cluster labels %q: %v", f.Labels, err)
		} else {
			selector = s
		}
	}
	cols := map[string]setColumn{}
	for i := range sets {
		col := setColumn{Name: sets[i].Name, Readable: true, Paused: sets[i].Spec.Paused}
		if c := conditions.Get(&sets[i], holdfastv1.ReadyCondition); c != nil {
			col.Ready, col.Reason, col.Message = string(c.Status), c.Reason, c.Message
		}
		if hasPreview(&sets[i]) {
			ro := sets[i].Status.Rollout
			col.PreviewLink, col.Phase, col.AwaitsApproval = previewLink(col.Name), string(ro.Phase), ro.Phase.AwaitsApproval()
		}
		cols[col.Name] = col
	}
	for _, name := range statusSets(statuses) {
		if _, ok := cols[name]; !ok {
			cols[name] = setColumn{Name: name}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cols)) {
		page.AllSets = append(page.AllSets, cols[name])
		if f.ServiceSet == "" || f.ServiceSet == name {
			page.Sets = append(page.Sets, cols[name])
		}
	}
	byPair := map[string]*holdfastv1.ClusterServiceStatus{}
	for i := range statuses {
		css := &statuses[i]
		byPair[css.Namespace+"/"+css.Spec.Cluster+"/"+css.Spec.MultiClusterService] = css
	}
	sort.Slice(clusters, func(i, j int) bool {
		if clusters[i].Namespace != clusters[j].Namespace {
			return clusters[i].Namespace < clusters[j].Namespace
		}
		return clusters[i].Name < clusters[j].Name
	})
	var shownCells, ready, drifted int
	for i := range clusters {
		cl := &clusters[i]
		if !selector.Matches(labels.Set(cl.Labels)) {
			continue
		}
		row := clusterRow{Namespace: cl.Namespace, Name: cl.Name, Labels: fleetview.LabelString(cl.Labels), Connected: string(metav1.ConditionUnknown)}
		if c := conditions.Get(cl, holdfastv1.ClusterConnectedCondition); c != nil {
			row.Connected = string(c.Status)
			if c.Status != metav1.ConditionTrue {
				row.Message = c.Message
			}
		}
		keep := f.State == stateAll
		for _, col := range page.Sets {
			c := cell{Set: col.Name}
			if css := byPair[cl.Namespace+"/"+cl.Name+"/"+col.Name]; css != nil {
				c = cellOf(css)
				if c.Ready == string(metav1.ConditionTrue) {
					ready++
				}
				if c.Drifted > 0 {
					drifted++
				}
				shownCells++
			}
			keep = keep || (c.Present && f.matches(c))
			row.Cells = append(row.Cells, c)
		}
		if keep {
			page.Rows = append(page.Rows, row)
		}
	}
	page.Summary = fmt.Sprintf("%d clusters shown, %d service sets; %d of %d deployments Ready, %d with objects drifted now.",
		len(page.Rows), len(page.Sets), ready, shownCells, drifted)
	return page
}

// cellOf is what the matrix shows of one status object.
func cellOf(css *holdfastv1.ClusterServiceStatus) cell {
	c := cell{Present: true, Set: css.Spec.MultiClusterService, Ready: string(metav1.ConditionUnknown), Health: string(metav1.ConditionUnknown),
		Drift: driftStateOf(css), Drifted: css.Status.DriftedCount}
	if r := conditions.Get(css, holdfastv1.ReadyCondition); r != nil {
		c.Ready, c.Reason, c.Message = string(r.Status), r.Reason, r.Message
	}
	if h := conditions.Get(css, holdfastv1.HealthyCondition); h != nil {
		c.Health = healthWord(h.Status)
	}
	if p := conditions.Get(css, holdfastv1.PausedCondition); p != nil && p.Status == metav1.ConditionTrue {
		c.Paused = true
	}
	for _, s := range css.Status.Services {
		if s.LastAppliedTime != nil {
			c.LastChange = later(c.LastChange, s.LastAppliedTime.UTC())
		}
	}
	for _, d := range css.Status.Drifts {
		c.LastChange = later(c.LastChange, d.DetectedTime.UTC())
	}
	q := url.Values{"cluster": {css.Namespace + "/" + css.Spec.Cluster}, "set": {css.Spec.MultiClusterService}}
	c.DriftLink = "/drift?" + q.Encode()
	return c
}

func healthWord(s metav1.ConditionStatus) string {
	switch s {
	case metav1.ConditionTrue:
		return "Healthy"
	case metav1.ConditionFalse:
		return "Unhealthy"
	}
	return "Unknown"
}

func later(cur *time.Time, t time.Time) *time.Time {
	if cur == nil || t.After(*cur) {
		return &t
	}
	return cur
}

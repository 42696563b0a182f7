package fleetview

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/drift"
)

// The CLI's JSON documents are its own types, not the API objects: scripts depend on them, so
// they stay stable while the API evolves. Within cliAPIVersion fields are only ever added; a
// rename or removal gets a new version. docs/cli.md shows an example of each.
const cliAPIVersion = "holdfast.dev/cli/v1alpha1"

// Kinds of the documents of the verbs that read the fleet.
const (
	kindFleetStatus  = "FleetStatus"
	kindDriftList    = "DriftList"
	kindDriftHistory = "DriftHistory"
)

// Kinds of the documents of the verbs that change the hub.
const (
	KindCorrectionRequest = "CorrectionRequest"
	KindPauseRequest      = "PauseRequest"
)

// stateCorrected marks, in a DriftList, a drift record that was put back (`drift --all`); the
// other states are the API's resource states.
const stateCorrected = "Corrected"

// Header is what every CLI JSON document starts with.
type Header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// Location says where a row belongs: the Cluster, the service set (MultiClusterService) and the
// service. Service is empty on a status row of a cluster that has no service status yet.
type Location struct {
	ClusterNamespace string `json:"clusterNamespace"`
	Cluster          string `json:"cluster"`
	ServiceSet       string `json:"serviceSet"`
	Service          string `json:"service"`
}

// FleetStatus is `holdfast status -o json`.
type FleetStatus struct {
	Header
	Summary FleetSummary   `json:"summary"`
	Items   []ServiceState `json:"items"`
}

// FleetSummary counts the rows of a FleetStatus.
type FleetSummary struct {
	Clusters          int `json:"clusters"`
	ServiceSets       int `json:"serviceSets"`
	Services          int `json:"services"`
	Ready             int `json:"ready"`
	NotReady          int `json:"notReady"`
	DriftedObjects    int `json:"driftedObjects"`
	ClustersWithDrift int `json:"clustersWithDrift"`
}

// ServiceState is one service of one service set on one cluster.
type ServiceState struct {
	Location
	// Ready is True, False or Unknown; Reason and Message explain it.
	Ready   string `json:"ready"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	// Health is the least healthy of the service's objects (kstatus: Current, InProgress,
	// Failed...), and HealthMessage which object and why when it is not Current; both left out
	// until the service's objects were applied, and on a row without a service.
	Health        string `json:"health,omitempty"`
	HealthMessage string `json:"healthMessage,omitempty"`
	// SyncMode in effect at the last reconcile.
	SyncMode string `json:"syncMode,omitempty"`
	// Paused is true while the service set or the Cluster is paused.
	Paused bool `json:"paused"`
	// Objects the service declares; DriftedObjects of them are Drifted, Missing or Contested.
	Objects        int32 `json:"objects"`
	DriftedObjects int   `json:"driftedObjects"`
	// LastDriftTime is when the newest drift record of the service was detected.
	LastDriftTime *time.Time `json:"lastDriftTime,omitempty"`
	// StatusName is the ClusterServiceStatus the row comes from, in ClusterNamespace.
	StatusName string `json:"statusName"`
	// Revision is the digest of the service's objects last applied; LastAppliedTime is when the
	// service was last applied completely. Both are absent on a row without a service.
	Revision        string     `json:"revision,omitempty"`
	LastAppliedTime *time.Time `json:"lastAppliedTime,omitempty"`
	// LastFullReconcileTime is when every service of the pair was last rendered, compared and
	// applied; ObservedServiceSetGeneration the service set generation then reconciled.
	LastFullReconcileTime        *time.Time `json:"lastFullReconcileTime,omitempty"`
	ObservedServiceSetGeneration int64      `json:"observedServiceSetGeneration,omitempty"`
}

// ObjectRef names an object on a target cluster.
type ObjectRef struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// FieldChange is one changed field. Old and New are JSON values; a missing one means the field
// was absent. Values of a Secret's data are "(redacted)".
type FieldChange struct {
	Path string `json:"path"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

// Drift is what changed in one drift, who changed it, and when it was found and put back.
type Drift struct {
	// Type is Changed or Deleted.
	Type   string        `json:"type"`
	Fields []FieldChange `json:"fields,omitempty"`
	// Manager, Operation and Subresource are who made the change, as the API server recorded
	// it; Manager is empty when unknown (deletions are not attributed).
	Manager     string `json:"manager,omitempty"`
	Operation   string `json:"operation,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	// User is who made the change as the target's API server authenticated them, when the
	// service set's drift.attribution is Auto and the change was stamped; empty when unknown.
	User string `json:"user,omitempty"`
	// Detection is Watch or Comparison (the time of the change is then not known).
	Detection    string    `json:"detection"`
	DetectedTime time.Time `json:"detectedTime"`
	// CorrectedTime is when the drift ended, the object back as declared; CorrectionLatencySeconds
	// is CorrectedTime - DetectedTime. Both are absent while the drift is not over.
	CorrectedTime            *time.Time `json:"correctedTime,omitempty"`
	CorrectionLatencySeconds *float64   `json:"correctionLatencySeconds,omitempty"`
	// Resolution is how it ended: Corrected (by Holdfast) or Restored (by someone else,
	// RestoredBy: "user via manager", or the manager); absent while it is not over.
	Resolution string `json:"resolution,omitempty"`
	RestoredBy string `json:"restoredBy,omitempty"`
}

// DriftList is `holdfast drift -o json`.
type DriftList struct {
	Header
	Items []DriftedObject `json:"items"`
}

// Drifted counts the objects of the list that are not as declared now (drifts already
// corrected, which --all adds, are not counted).
func (l *DriftList) Drifted() int {
	n := 0
	for _, it := range l.Items {
		if it.State != stateCorrected {
			n++
		}
	}
	return n
}

// DriftedObject is an object that is not as declared, or with --all a drift that was corrected.
type DriftedObject struct {
	Location
	Object ObjectRef `json:"object"`
	// State is Drifted, Missing or Contested; or Corrected for a corrected drift record.
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
	// Drift is the drift that left the object in State; absent when the controller recorded
	// none.
	Drift *Drift `json:"drift,omitempty"`
}

// DriftHistory is `holdfast history -o json`.
type DriftHistory struct {
	Header
	// Total is how many records matched before --limit.
	Total int                 `json:"total"`
	Items []DriftHistoryEntry `json:"items"`
}

// DriftHistoryEntry is one drift record.
type DriftHistoryEntry struct {
	Location
	Object ObjectRef `json:"object"`
	Drift  Drift     `json:"drift"`
}

// CorrectionRequestList is `holdfast correct -o json`.
type CorrectionRequestList struct {
	Header
	Items []CorrectionRequest `json:"items"`
}

// CorrectionRequest is one reconcile request made by `holdfast correct`.
type CorrectionRequest struct {
	ServiceSet string `json:"serviceSet"`
	// ClusterNamespace and Cluster are set when the request was for one cluster.
	ClusterNamespace string `json:"clusterNamespace,omitempty"`
	Cluster          string `json:"cluster,omitempty"`
	// Target is the object whose annotation was set.
	Target TargetRef `json:"target"`
	// RequestedAt is the value written to holdfast.dev/reconcile-requested-at.
	RequestedAt string `json:"requestedAt"`
	// Handled, Clusters and DriftedObjects are set with --wait: the request was handled by
	// Clusters clusters, after which DriftedObjects objects are still Drifted, Missing or
	// Contested.
	Handled        bool   `json:"handled"`
	Clusters       *int   `json:"clusters,omitempty"`
	DriftedObjects *int32 `json:"driftedObjects,omitempty"`
}

// TargetRef names a Holdfast object on the hub.
type TargetRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// PauseRequestList is `holdfast pause|resume -o json`.
type PauseRequestList struct {
	Header
	Items []PauseRequest `json:"items"`
}

// PauseRequest is the result of one pause or resume.
type PauseRequest struct {
	ServiceSet string `json:"serviceSet"`
	Paused     bool   `json:"paused"`
	// Changed is false when the service set already was in that state.
	Changed bool `json:"changed"`
}

// WriteYAML writes doc as YAML: the same document WriteJSON writes, field for field.
func WriteYAML(w io.Writer, doc any) error {
	out, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding YAML: %w", err)
	}
	_, err = w.Write(out)
	return err
}

// WriteJSON prints a CLI document, indented, with a final newline.
func WriteJSON(w io.Writer, doc any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// sortStatuses orders status objects by cluster, then service set.
func sortStatuses(statuses []holdfastv1.ClusterServiceStatus) {
	sort.SliceStable(statuses, func(i, j int) bool {
		a, b := &statuses[i], &statuses[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Spec.Cluster != b.Spec.Cluster {
			return a.Spec.Cluster < b.Spec.Cluster
		}
		return a.Spec.MultiClusterService < b.Spec.MultiClusterService
	})
}

func locationOf(css *holdfastv1.ClusterServiceStatus, service string) Location {
	return Location{ClusterNamespace: css.Namespace, Cluster: css.Spec.Cluster, ServiceSet: css.Spec.MultiClusterService, Service: service}
}

// pausedStatus reports whether the pair is paused, by its service set or its Cluster.
func pausedStatus(css *holdfastv1.ClusterServiceStatus) bool {
	if c := conditions.Get(css, holdfastv1.PausedCondition); c != nil && c.Status == metav1.ConditionTrue {
		return true
	}
	c := conditions.Get(css, holdfastv1.TargetClusterReadyCondition)
	return c != nil && c.Reason == holdfastv1.ClusterPausedReason
}

// BuildFleetStatus makes one row per (cluster, service set, service) of the status objects that
// match f.
func BuildFleetStatus(statuses []holdfastv1.ClusterServiceStatus, f Filter) FleetStatus {
	out := FleetStatus{Header: Header{cliAPIVersion, kindFleetStatus}, Items: []ServiceState{}}
	statuses = f.apply(statuses)
	clusters, sets, driftClusters := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i := range statuses {
		css := &statuses[i]
		paused := pausedStatus(css)
		if len(css.Status.Services) == 0 {
			if f.Service != "" {
				continue
			}
			row := ServiceState{Location: locationOf(css, ""), Ready: string(metav1.ConditionUnknown), Reason: holdfastv1.ProbingReason,
				SyncMode: string(css.Status.SyncMode), Paused: paused, Objects: css.Status.ResourceCount}
			setPairState(&row, css)
			if c := conditions.Get(css, holdfastv1.ReadyCondition); c != nil {
				row.Ready, row.Reason, row.Message = string(c.Status), c.Reason, c.Message
			}
			for _, r := range css.Status.Resources {
				if drift.Unresolved(r.State) {
					row.DriftedObjects++
				}
			}
			row.LastDriftTime = lastDrift(css, nil)
			out.Items = append(out.Items, row)
		}
		for _, s := range css.Status.Services {
			if !f.matchesService(s.Name) {
				continue
			}
			row := ServiceState{Location: locationOf(css, s.Name), Ready: string(s.Ready), Reason: s.Reason, Message: s.Message,
				Health: string(s.Health), HealthMessage: s.HealthMessage,
				SyncMode: string(css.Status.SyncMode), Paused: paused, Objects: s.Objects, Revision: s.Revision, LastAppliedTime: utc(s.LastAppliedTime)}
			setPairState(&row, css)
			for _, r := range css.Status.Resources {
				if r.Service == s.Name && drift.Unresolved(r.State) {
					row.DriftedObjects++
				}
			}
			name := s.Name
			row.LastDriftTime = lastDrift(css, &name)
			out.Items = append(out.Items, row)
		}
	}
	for _, row := range out.Items {
		cluster := row.ClusterNamespace + "/" + row.Cluster
		clusters[cluster], sets[row.ServiceSet] = true, true
		if row.Ready == string(metav1.ConditionTrue) {
			out.Summary.Ready++
		} else {
			out.Summary.NotReady++
		}
		if row.DriftedObjects > 0 {
			out.Summary.DriftedObjects += row.DriftedObjects
			driftClusters[cluster] = true
		}
	}
	out.Summary.Clusters, out.Summary.ServiceSets, out.Summary.Services = len(clusters), len(sets), len(out.Items)
	out.Summary.ClustersWithDrift = len(driftClusters)
	return out
}

// setPairState copies to a row what the status object says of the pair as a whole.
func setPairState(row *ServiceState, css *holdfastv1.ClusterServiceStatus) {
	row.StatusName = css.Name
	row.LastFullReconcileTime = utc(css.Status.LastFullReconcileTime)
	row.ObservedServiceSetGeneration = css.Status.ObservedServiceSetGeneration
}

func utc(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// lastDrift is the detection time of the newest drift record, of one service when service is
// set. Records are newest first, but the CLI does not rely on it.
func lastDrift(css *holdfastv1.ClusterServiceStatus, service *string) *time.Time {
	var last *time.Time
	for i := range css.Status.Drifts {
		d := &css.Status.Drifts[i]
		if service != nil && d.Service != *service {
			continue
		}
		if t := d.DetectedTime.UTC(); last == nil || t.After(*last) {
			last = &t
		}
	}
	return last
}

// BuildDriftList lists the objects that are Drifted, Missing or Contested, by cluster, service
// set, service and object; with all, then the corrected drift records, newest first.
func BuildDriftList(statuses []holdfastv1.ClusterServiceStatus, f Filter, all bool) DriftList {
	out := DriftList{Header: Header{cliAPIVersion, kindDriftList}, Items: []DriftedObject{}}
	statuses = f.apply(statuses)
	var corrected []DriftedObject
	for i := range statuses {
		css := &statuses[i]
		var current []DriftedObject
		for _, r := range css.Status.Resources {
			if !drift.Unresolved(r.State) || !f.matchesService(r.Service) {
				continue
			}
			item := DriftedObject{Location: locationOf(css, r.Service), Object: objectRef(r.ResourceRef), State: string(r.State), Message: r.Message}
			if r.LastDrift != nil {
				d := driftView(r.ResourceRef, *r.LastDrift, nil)
				item.Drift = &d
			}
			current = append(current, item)
		}
		sort.SliceStable(current, func(i, j int) bool {
			if current[i].Service != current[j].Service {
				return current[i].Service < current[j].Service
			}
			return objectString(current[i].Object) < objectString(current[j].Object)
		})
		out.Items = append(out.Items, current...)
		if !all {
			continue
		}
		for _, rec := range css.Status.Drifts {
			if rec.CorrectedTime == nil || !f.matchesService(rec.Service) {
				continue
			}
			d := recordView(rec)
			corrected = append(corrected, DriftedObject{Location: locationOf(css, rec.Service), Object: objectRef(rec.ResourceRef), State: stateCorrected, Drift: &d})
		}
	}
	sort.SliceStable(corrected, func(i, j int) bool { return corrected[i].Drift.DetectedTime.After(corrected[j].Drift.DetectedTime) })
	out.Items = append(out.Items, corrected...)
	return out
}

// BuildDriftHistory lists the drift records detected at or after since (unless zero), newest
// first, at most limit of them (unless 0).
func BuildDriftHistory(statuses []holdfastv1.ClusterServiceStatus, f Filter, since time.Time, limit int) DriftHistory {
	out := DriftHistory{Header: Header{cliAPIVersion, kindDriftHistory}, Items: []DriftHistoryEntry{}}
	statuses = f.apply(statuses) // sorted, so equal times keep a stable order
	for i := range statuses {
		css := &statuses[i]
		for _, rec := range css.Status.Drifts {
			if !f.matchesService(rec.Service) || (!since.IsZero() && rec.DetectedTime.Before(&metav1.MicroTime{Time: since})) {
				continue
			}
			out.Items = append(out.Items, DriftHistoryEntry{Location: locationOf(css, rec.Service), Object: objectRef(rec.ResourceRef),
				Drift: recordView(rec)})
		}
	}
	sort.SliceStable(out.Items, func(i, j int) bool { return out.Items[i].Drift.DetectedTime.After(out.Items[j].Drift.DetectedTime) })
	out.Total = len(out.Items)
	if limit > 0 && len(out.Items) > limit {
		out.Items = out.Items[:limit]
	}
	return out
}

func objectRef(r holdfastv1.ResourceRef) ObjectRef {
	return ObjectRef{Group: r.Group, Version: r.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// recordView converts a drift record: its drift, and how it ended.
func recordView(rec holdfastv1.DriftRecord) Drift {
	d := driftView(rec.ResourceRef, rec.DriftDetail, rec.CorrectedTime)
	if rec.CorrectedTime == nil {
		return d
	}
	d.Resolution = string(holdfastv1.DriftCorrected)
	if rec.Resolution == holdfastv1.DriftRestored {
		d.Resolution = string(rec.Resolution)
		if by := rec.RestoredBy; by != nil {
			d.RestoredBy = managerString(&Drift{Manager: by.Manager, User: by.User})
		}
	}
	return d
}

// driftView converts a drift of the object ref, redacting Secret data and showing binary data
// as its size and digest.
func driftView(ref holdfastv1.ResourceRef, d holdfastv1.DriftDetail, corrected *metav1.MicroTime) Drift {
	out := Drift{
		Type: string(d.Type), Manager: d.Manager, Operation: d.Operation, Subresource: d.Subresource, User: d.User,
		Detection: string(d.Detection), DetectedTime: d.DetectedTime.UTC(),
	}
	if out.Detection == "" {
		out.Detection = string(holdfastv1.DriftDetectedByWatch)
	}
	for _, fc := range d.Fields {
		c := FieldChange(fc)
		switch {
		case secretData(ref, fc.Path):
			c.Old, c.New = redact(c.Old), redact(c.New)
		case drift.BinaryValuePath(fc.Path):
			c.Old, c.New = drift.ShowBinaryText(c.Old), drift.ShowBinaryText(c.New)
		}
		out.Fields = append(out.Fields, c)
	}
	if corrected != nil {
		t := corrected.UTC()
		latency := t.Sub(out.DetectedTime).Seconds()
		out.CorrectedTime, out.CorrectionLatencySeconds = &t, &latency
	}
	return out
}

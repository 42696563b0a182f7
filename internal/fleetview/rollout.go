package fleetview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
)

// KindRolloutStatus is the kind of `holdfast rollout status -o json`.
const KindRolloutStatus = "RolloutStatus"

// RolloutStatusList is `holdfast rollout status -o json`.
type RolloutStatusList struct {
	Header
	Items []RolloutView `json:"items"`
}

// RolloutView is the rollout of one service set.
type RolloutView struct {
	ServiceSet string `json:"serviceSet"`
	// Strategy is false when the service set has no spec.rollout: every cluster follows it as
	// it is, and the other fields are empty.
	Strategy       bool                 `json:"strategy"`
	Revision       string               `json:"revision,omitempty"`
	StableRevision string               `json:"stableRevision,omitempty"`
	Phase          string               `json:"phase,omitempty"`
	Wave           int32                `json:"wave"`
	Waves          []RolloutWaveView    `json:"waves,omitempty"`
	FailedClusters []RolloutFailureView `json:"failedClusters,omitempty"`
	// Ready and Message are the service set's Ready condition reason and message.
	Ready   string `json:"ready,omitempty"`
	Message string `json:"message,omitempty"`
}

// RolloutWaveView is one wave's progress.
type RolloutWaveView struct {
	Name     string `json:"name"`
	Clusters int32  `json:"clusters"`
	Updated  int32  `json:"updated"`
	Healthy  int32  `json:"healthy"`
	Failed   int32  `json:"failed"`
}

// RolloutFailureView is a cluster that failed with the revision.
type RolloutFailureView struct {
	Cluster string `json:"cluster"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	// Resumed: it failed before the rollout was resumed and no longer counts.
	Resumed bool `json:"resumed,omitempty"`
}

// Names of a RolloutStatusList are its service sets.
func (l RolloutStatusList) Names() []string {
	out := make([]string, 0, len(l.Items))
	for _, it := range l.Items {
		out = append(out, it.ServiceSet)
	}
	return out
}

// NewRolloutStatusList is the document `holdfast rollout status -o json` prints for mcs.
func NewRolloutStatusList(mcs *holdfastv1.MultiClusterService) RolloutStatusList {
	v := RolloutView{ServiceSet: mcs.Name, Strategy: mcs.Spec.Rollout != nil}
	if ready := conditions.Get(mcs, holdfastv1.ReadyCondition); ready != nil {
		v.Ready, v.Message = ready.Reason, ready.Message
	}
	if ro := mcs.Status.Rollout; ro != nil {
		v.Revision, v.StableRevision, v.Phase, v.Wave = ro.Revision, ro.StableRevision, string(ro.Phase), ro.Wave
		for _, w := range ro.Waves {
			v.Waves = append(v.Waves, RolloutWaveView(w))
		}
		for _, f := range ro.FailedClusters {
			v.FailedClusters = append(v.FailedClusters, RolloutFailureView(f))
		}
	}
	return RolloutStatusList{Header: Header{cliAPIVersion, KindRolloutStatus}, Items: []RolloutView{v}}
}

// PrintRolloutStatus prints a rollout: a line on where it is, its waves, and the clusters
// that failed.
func PrintRolloutStatus(w io.Writer, v RolloutView) error {
	if !v.Strategy {
		_, err := fmt.Fprintf(w, "Service set %s has no rollout (spec.rollout): every cluster follows it as it is.\n", v.ServiceSet)
		return err
	}
	if v.Phase == "" {
		_, err := fmt.Fprintf(w, "Service set %s: no revision yet. %s\n", v.ServiceSet, v.Message)
		return err
	}
	fmt.Fprintf(w, "Service set %s: revision %s %s", v.ServiceSet, v.Revision, v.Phase)
	if int(v.Wave) < len(v.Waves) && v.Phase != string(holdfastv1.RolloutComplete) {
		fmt.Fprintf(w, " at wave %d of %d (%s)", v.Wave+1, len(v.Waves), v.Waves[v.Wave].Name)
	}
	fmt.Fprintf(w, "; stable revision %s\n", v.StableRevision)
	if v.Ready != holdfastv1.ReadyReason && v.Message != "" {
		fmt.Fprintf(w, "%s: %s\n", v.Ready, v.Message)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nWAVE\tCLUSTERS\tUPDATED\tHEALTHY\tFAILED")
	for _, wv := range v.Waves {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", wv.Name, wv.Clusters, wv.Updated, wv.Healthy, wv.Failed)
	}
	if len(v.FailedClusters) > 0 {
		fmt.Fprintln(tw, "\nFAILED CLUSTER\tREASON\tMESSAGE")
		for _, f := range v.FailedClusters {
			msg := f.Message
			if f.Resumed {
				msg = "(resumed) " + msg
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Cluster, f.Reason, strings.ReplaceAll(msg, "\n", " "))
		}
	}
	return tw.Flush()
}

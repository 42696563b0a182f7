package fleetview

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
)

// PrintClusters writes the fleet's Clusters as a table.
func PrintClusters(w io.Writer, clusters []holdfastv1.Cluster) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tREADY\tCONNECTED\tVERSION\tLABELS\tMESSAGE")
	for i := range clusters {
		c := &clusters[i]
		ready, connected, msg := "Unknown", "Unknown", ""
		for _, cond := range c.Status.Conditions {
			switch cond.Type {
			case holdfastv1.ReadyCondition:
				ready = string(cond.Status)
			case holdfastv1.ClusterConnectedCondition:
				connected = string(cond.Status) + " (" + cond.Reason + ")"
				msg = cond.Message
			}
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%s\t%s\n", c.Namespace, c.Name, ready, connected, OrDash(c.Status.Version), LabelString(c.Labels), Truncate(msg, 90))
	}
	return tw.Flush()
}

// LabelString lists labels as "k=v,k=v", sorted, leaving out prefixed keys (those with a "/");
// "-" when none are left.
func LabelString(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		if !strings.Contains(k, "/") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+l[k])
	}
	return OrDash(strings.Join(parts, ","))
}

// OrDash is s, or "-" when s is empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Truncate cuts s to about n bytes, never inside a UTF-8 sequence.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-1], "") + "…"
}

// PrintServiceStatuses writes one row per (cluster, service set, service) of the given
// ClusterServiceStatuses.
func PrintServiceStatuses(w io.Writer, statuses []*holdfastv1.ClusterServiceStatus, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tSERVICE SET\tSERVICE\tREADY\tREASON\tHEALTH\tOBJECTS\tIN SYNC\tREVISION\tLAST FULL RECONCILE\tMESSAGE")
	for _, css := range statuses {
		last := "-"
		if t := css.Status.LastFullReconcileTime; t != nil {
			last = now.Sub(t.Time).Round(time.Second).String() + " ago"
		}
		if len(css.Status.Services) == 0 {
			ready := conditions.Get(css, holdfastv1.ReadyCondition)
			status, reason, msg := "Unknown", "-", ""
			if ready != nil {
				status, reason, msg = string(ready.Status), ready.Reason, ready.Message
			}
			fmt.Fprintf(tw, "%s\t%s\t-\t%s\t%s\t-\t%d\t%d\t-\t%s\t%s\n", css.Spec.Cluster, css.Spec.MultiClusterService,
				status, reason, css.Status.ResourceCount, css.Status.InSyncCount, last, OrDash(Truncate(msg, 60)))
			continue
		}
		for _, s := range css.Status.Services {
			inSync := 0
			for _, r := range css.Status.Resources {
				if r.Service == s.Name && r.State == holdfastv1.ResourceInSync {
					inSync++
				}
			}
			msg := serviceMessage(s.Message, s.HealthMessage)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", css.Spec.Cluster, css.Spec.MultiClusterService, s.Name,
				s.Ready, OrDash(s.Reason), OrDash(string(s.Health)), s.Objects, inSync, ShortDigest(s.Revision), last, OrDash(Truncate(msg, 60)))
		}
	}
	return tw.Flush()
}

// PrintServiceSets writes the MultiClusterServices' summaries.
func PrintServiceSets(w io.Writer, sets []*holdfastv1.MultiClusterService) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE SET\tSELECTOR\tMODE\tREADY\tREASON\tMATCHING\tREADY CLUSTERS\tFAILED")
	for _, m := range sets {
		status, reason := "Unknown", "-"
		if c := conditions.Get(m, holdfastv1.ReadyCondition); c != nil {
			status, reason = string(c.Status), c.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\n", m.Name, SelectorString(m.Spec.ClusterSelector), OrDash(string(m.Spec.SyncMode)),
			status, reason, m.Status.MatchingClusters, m.Status.ReadyClusters, m.Status.FailedClusters)
	}
	return tw.Flush()
}

// SelectorString renders a cluster selector as kubectl would, plus its namespaces.
func SelectorString(sel holdfastv1.ClusterSelector) string {
	s := metav1.FormatLabelSelector(&sel.LabelSelector)
	if s == "<none>" {
		s = "(every cluster)"
	}
	if len(sel.Namespaces) > 0 {
		s += " in " + strings.Join(sel.Namespaces, ",")
	}
	return s
}

// ShortDigest shortens "sha256:<hex>" to its first 8 hex digits.
func ShortDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	if len(d) > 8 {
		d = d[:8]
	}
	return OrDash(d)
}

package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// printClusters writes the fleet's Clusters as a table.
func printClusters(w io.Writer, clusters []holdfastv1.Cluster) error {
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
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%s\t%s\n", c.Namespace, c.Name, ready, connected, orDash(c.Status.Version), labelString(c.Labels), truncate(msg, 90))
	}
	return tw.Flush()
}

func labelString(l map[string]string) string {
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
	return orDash(strings.Join(parts, ","))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

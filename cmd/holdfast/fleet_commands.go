package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview"
)

// fleetReadOptions are the flags of the verbs that read the fleet: status, drift and history.
type fleetReadOptions struct {
	hub        hubOptions
	cluster    clusterFlags
	serviceSet string
	service    string
}

// addFlags adds the flags to cmd, with the completion of their values.
func (o *fleetReadOptions) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	o.hub.addFlags(fs)
	o.cluster.addFlags(fs)
	fs.StringVar(&o.serviceSet, "service-set", "", "only this service set (MultiClusterService)")
	fs.StringVar(&o.service, "service", "", "only this service of the service sets")
	registerFlagCompletions(cmd, &o.hub)
}

func (o *fleetReadOptions) filter() (fleetview.Filter, error) {
	if err := o.hub.validate(); err != nil {
		return fleetview.Filter{}, err
	}
	ns, name, err := o.cluster.resolve()
	if err != nil {
		return fleetview.Filter{}, err
	}
	return fleetview.Filter{ClusterNamespace: ns, Cluster: name, ServiceSet: o.serviceSet, Service: o.service}, nil
}

// run reads the matching status objects and hands them to print, which renders per --output.
func (o *fleetReadOptions) run(cmd *cobra.Command, print func(fleetview.Filter, *fleetData) error) error {
	f, err := o.filter()
	if err != nil {
		return err
	}
	c, err := o.hub.client()
	if err != nil {
		return err
	}
	statuses, err := fleetview.ListStatuses(cmd.Context(), c, f)
	if err != nil {
		return err
	}
	return print(f, &fleetData{statuses: statuses, now: time.Now()})
}

func newStatusCommand() *cobra.Command {
	o := &fleetReadOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the fleet: one row per cluster, service set and service",
		Long: `Shows, for every cluster and service set deployed to it, each service's state: Ready and its
reason, the sync mode (and whether the service set or the Cluster is paused), how many objects
the service declares, how many of them are Drifted, Missing or Contested, and when its last
drift was detected; then a summary line.`,
		Example: `  holdfast status
  holdfast status --cluster holdfast-system/prod-eu-1
  holdfast status --service-set platform -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd, func(f fleetview.Filter, d *fleetData) error {
				fs := fleetview.BuildFleetStatus(d.statuses, f)
				return o.hub.print(cmd.OutOrStdout(), fs,
					func(w io.Writer) error { return fleetview.PrintFleetStatus(w, fs, d.now) },
					func(w io.Writer) error { return fleetview.PrintFleetStatusWide(w, fs, d.now) })
			})
		},
	}
	o.addFlags(cmd)
	return cmd
}

func newDriftCommand() *cobra.Command {
	o := &fleetReadOptions{}
	var all, exitCode bool
	cmd := &cobra.Command{
		Use:   "drift",
		Short: "List the objects that are not as declared, with their diffs and authors",
		Long: `Lists every managed object that is Drifted, Missing or Contested: what changed (path: old ->
new), who changed it (field manager, operation, subresource), when it was detected, and the
object's state and message. With --all, the drifts Holdfast already corrected (from each
cluster's recent drift records) follow, newest first. Values of Secret data are never shown.`,
		Example: `  holdfast drift
  holdfast drift --service-set platform --service ingress
  holdfast drift --all -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := o.run(cmd, func(f fleetview.Filter, d *fleetData) (err error) {
				dl := fleetview.BuildDriftList(d.statuses, f, all)
				err = o.hub.print(cmd.OutOrStdout(), dl,
					func(w io.Writer) error { return fleetview.PrintDriftList(w, dl, d.now) },
					func(w io.Writer) error { return fleetview.PrintDriftListWide(w, dl, d.now) })
				if err == nil && exitCode && dl.Drifted() > 0 {
					return errDrift
				}
				return err
			})
			if exitCode && err != nil && !errors.Is(err, errDrift) {
				return &exitError{code: 2, err: err}
			}
			return err
		},
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "also list recent drifts that were corrected")
	cmd.Flags().BoolVar(&exitCode, "exit-code", false, "exit 1 when an object is drifted, missing or contested, 0 when none is, 2 on an error (as flux diff does)")
	return cmd
}

func newHistoryCommand() *cobra.Command {
	o := &fleetReadOptions{}
	var since time.Duration
	var limit int
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List recent drift records across the fleet, newest first",
		Long: `Lists the drift records of the fleet, newest first: when each drift was detected (and whether
by a watch or a comparison), the object, the change, its author, when Holdfast corrected it and
how long that took (correction latency = corrected - detected). Each cluster keeps the last 20
records per service set.`,
		Example: `  holdfast history --since 1h
  holdfast history --cluster prod-eu-1 --limit 0 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if since < 0 || limit < 0 {
				return fmt.Errorf("--since and --limit must not be negative")
			}
			return o.run(cmd, func(f fleetview.Filter, d *fleetData) error {
				var from time.Time
				if since > 0 {
					from = d.now.Add(-since)
				}
				h := fleetview.BuildDriftHistory(d.statuses, f, from, limit)
				return o.hub.print(cmd.OutOrStdout(), h,
					func(w io.Writer) error { return fleetview.PrintDriftHistory(w, h) },
					func(w io.Writer) error { return fleetview.PrintDriftHistoryWide(w, h) })
			})
		},
	}
	o.addFlags(cmd)
	cmd.Flags().DurationVar(&since, "since", 0, "only drifts detected within this duration, e.g. 30m or 24h (default: all)")
	cmd.Flags().IntVar(&limit, "limit", 100, "at most this many records; 0 for all")
	return cmd
}

// fleetData is what the read verbs render.
type fleetData struct {
	statuses []holdfastv1.ClusterServiceStatus
	now      time.Time
}

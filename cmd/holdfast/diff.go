package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/wait"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview"
)

// The answers of `holdfast diff --exit-code` (as flux diff's: 1 for changes, 2 for the worst),
// printed nothing more: the preview already was.
var (
	errPreviewChanges = &exitError{code: 1}
	errPreviewRefused = &exitError{code: 2}
)

// diffOptions are the flags of `holdfast diff`.
type diffOptions struct {
	hub      hubOptions
	cluster  clusterFlags
	exitCode bool
	// wait is how long to wait for the preview to be complete (phase Previewed) first.
	wait time.Duration
}

func newDiffCommand() *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff SERVICESET",
		Short: "Show what a service set's revision waiting for approval would change on its clusters",
		Long: `A service set with spec.rollout.approval: Manual previews each new revision on every matching
cluster (a server-side dry run, diffed against what is live; nothing changes) and holds it until
` + "`holdfast rollout approve`" + `. diff prints that preview: how many clusters would change, are
unchanged or refused it, then the clusters grouped by identical changes, each group with a few
of its clusters and its changes shortened. With --cluster, one cluster's whole preview: every
object and every changed field. Secret values are never shown.

With --exit-code it exits 0 when nothing would change on the clusters previewed, 1 when
something would, 2 when a cluster refused the revision or on an error. Clusters whose preview
is not made yet, failed or cannot be made count for nothing (a warning on stderr says how many).
With --wait, diff first waits (at most that long) until every cluster has previewed the revision
(phase Previewed), as a pipeline that changed a template and gates on the preview needs; if the
wait ends first, it prints what is there, and --exit-code exits 2.`,
		Example: `  holdfast diff platform
  holdfast diff platform --cluster holdfast-system/prod-eu-1
  holdfast diff platform --exit-code -o json
  holdfast diff platform --wait 5m --exit-code    # in a pipeline, after changing a template
  holdfast diff team-a/apps                     # a tenant's ServiceSet`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServiceSetArg(&o.hub),
		RunE: func(cmd *cobra.Command, args []string) error {
			var incomplete error
			if o.wait > 0 {
				if incomplete = o.waitPreviewed(cmd, args[0]); incomplete != nil && !errors.Is(incomplete, errPreviewIncomplete) {
					return diffResult(nil, incomplete, o.exitCode, cmd.ErrOrStderr())
				}
			}
			v, err := o.run(cmd, args[0])
			if err == nil && incomplete != nil && o.exitCode {
				return &exitError{code: 2, err: incomplete}
			}
			return diffResult(v, err, o.exitCode, cmd.ErrOrStderr())
		},
	}
	o.hub.addFlags(cmd.Flags())
	o.cluster.addFlags(cmd.Flags())
	registerFlagCompletions(cmd, &o.hub)
	cmd.Flags().BoolVar(&o.exitCode, "exit-code", false,
		"exit 0 when nothing would change, 1 when something would, 2 when a cluster refused the revision or on an error")
	cmd.Flags().DurationVar(&o.wait, "wait", 0, "wait at most this long until every cluster has previewed the revision (phase Previewed)")
	return cmd
}

// errPreviewIncomplete: --wait ended before every cluster had previewed the revision.
var errPreviewIncomplete = errors.New("the preview is not complete")

// waitPreviewed waits, at most o.wait, until serviceSet's rollout is Previewed with its summary
// of the revision it holds, reading it every second; it returns errPreviewIncomplete if the wait
// ends first. A rollout that holds nothing ends the wait at once: diff then says why.
func (o *diffOptions) waitPreviewed(cmd *cobra.Command, serviceSet string) error {
	previewed := func(ctx context.Context) (bool, error) {
		mcs, _, err := readServiceSet(cmd, &o.hub, serviceSet)
		if err != nil {
			return false, err
		}
		ro := mcs.Status.Rollout
		if ro == nil || !ro.Phase.AwaitsApproval() {
			return true, nil
		}
		return ro.Phase == holdfastv1.RolloutPreviewed && ro.Preview != nil && ro.Preview.Revision == ro.Revision, nil
	}
	err := wait.PollUntilContextTimeout(cmd.Context(), time.Second, o.wait, true, previewed)
	if wait.Interrupted(err) {
		fmt.Fprintf(cmd.ErrOrStderr(), "Warning: waited %s and not every cluster has previewed the revision yet\n", o.wait)
		return errPreviewIncomplete
	}
	return err
}

// run prints the preview of serviceSet, or of one of its clusters, and returns it.
func (o *diffOptions) run(cmd *cobra.Command, serviceSet string) (*fleetview.PreviewView, error) {
	ns, cluster, err := o.cluster.resolve()
	if err != nil {
		return nil, err
	}
	if ns != "" && cluster == "" {
		return nil, fmt.Errorf("-n needs --cluster: diff shows a whole service set, or one of its clusters")
	}
	mcs, set, err := readServiceSet(cmd, &o.hub, serviceSet)
	if err != nil {
		return nil, err
	}
	if _, tenant := set.(*holdfastv1.ServiceSet); tenant && ns == "" {
		ns = set.GetNamespace() // a ServiceSet's clusters are in its namespace
	}
	var doc fleetview.PreviewList
	if cluster == "" {
		doc, err = fleetview.NewPreviewList(mcs)
	} else {
		doc, err = o.clusterPreview(cmd, mcs, ns, cluster)
	}
	if err != nil {
		return nil, err
	}
	v := doc.Items[0]
	if err := o.hub.print(cmd.OutOrStdout(), doc, func(w io.Writer) error { return fleetview.PrintPreview(w, v) }, nil); err != nil {
		return nil, err
	}
	return &v, nil
}

// clusterPreview reads the ClusterServiceStatus of mcs on the Cluster (namespace empty: the one
// Cluster of that name the service set is deployed to) and makes its preview's document.
func (o *diffOptions) clusterPreview(cmd *cobra.Command, mcs *holdfastv1.MultiClusterService, namespace, cluster string) (fleetview.PreviewList, error) {
	c, err := o.hub.client()
	if err != nil {
		return fleetview.PreviewList{}, err
	}
	css, err := fleetview.FindStatus(cmd.Context(), c, mcs.Name, namespace, cluster)
	if err != nil {
		return fleetview.PreviewList{}, err
	}
	return fleetview.NewClusterPreviewList(mcs, css)
}

// diffResult is what `holdfast diff` returns once it printed v (nil when it failed with err):
// without --exit-code, err; with it, the preview's verdict as an exit code, and an error as
// exit 2, so that 1 always means changes. Clusters whose outcome is not known are warned of
// on log.
func diffResult(v *fleetview.PreviewView, err error, exitCode bool, log io.Writer) error {
	if !exitCode {
		return err
	}
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if n := v.Unknown(); n > 0 {
		fmt.Fprintf(log, "Warning: the preview of %s is not known (not previewed yet, failed, or cannot be previewed): the exit code does not cover it\n",
			fleetview.Count(n, "cluster"))
	}
	switch v.Verdict() {
	case holdfastv1.PreviewRefused:
		return errPreviewRefused
	case holdfastv1.PreviewChanges:
		return errPreviewChanges
	}
	return nil
}

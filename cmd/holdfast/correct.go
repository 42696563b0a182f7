package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview"
)

// correctPollInterval is how often `correct --wait` reads the object it patched.
const correctPollInterval = 250 * time.Millisecond

type correctOptions struct {
	hub     hubOptions
	cluster clusterFlags
	wait    bool
	timeout time.Duration
}

func newCorrectCommand() *cobra.Command {
	o := &correctOptions{}
	cmd := &cobra.Command{
		Use:   "correct SERVICESET",
		Short: "Ask for a full reconcile of a service set now, correcting its drift",
		Long: `Sets the annotation holdfast.dev/reconcile-requested-at to a new value (the current time) on the
MultiClusterService SERVICESET, or with --cluster on its ClusterServiceStatus for that cluster
only. Holdfast then runs a full reconcile of every cluster concerned: drifted and deleted objects
are put back, also those waiting for a manual correction (drift action Report) or Contested.
With --wait, waits until the request is handled (status.lastHandledReconcileAt of the patched
object equals the value; for a service set, once every cluster handled it) and prints how many
objects are still drifted. A paused service set or Cluster handles the request only once it is
resumed.`,
		Example: `  holdfast correct platform --wait
  holdfast correct platform --cluster holdfast-system/prod-eu-1 --wait --timeout 30s`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServiceSetArg(&o.hub),
		RunE:              func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0]) },
	}
	o.hub.addFlags(cmd.Flags())
	o.cluster.addFlags(cmd.Flags())
	registerFlagCompletions(cmd, &o.hub)
	cmd.Flags().BoolVar(&o.wait, "wait", false, "wait until the request is handled, then print the drifted object count")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long --wait waits")
	return cmd
}

func (o *correctOptions) run(cmd *cobra.Command, serviceSet string) error {
	if err := o.hub.validate(); err != nil {
		return err
	}
	ns, cluster, err := o.cluster.resolve()
	if err != nil {
		return err
	}
	if ns != "" && cluster == "" {
		return fmt.Errorf("-n needs --cluster: correct asks a whole service set, or one of its clusters")
	}
	ctx := cmd.Context()
	c, err := o.hub.client()
	if err != nil {
		return err
	}
	mcs := &holdfastv1.MultiClusterService{}
	if err := c.Get(ctx, client.ObjectKey{Name: serviceSet}, mcs); err != nil {
		return fmt.Errorf("reading MultiClusterService %s: %w", serviceSet, err)
	}
	var target client.Object = mcs
	req := fleetview.CorrectionRequest{ServiceSet: serviceSet, Target: fleetview.TargetRef{Kind: "MultiClusterService", Name: serviceSet}}
	if cluster != "" {
		css, err := fleetview.FindStatus(ctx, c, serviceSet, ns, cluster)
		if err != nil {
			return err
		}
		target = css
		req.ClusterNamespace, req.Cluster = css.Namespace, css.Spec.Cluster
		req.Target = fleetview.TargetRef{Kind: "ClusterServiceStatus", Namespace: css.Namespace, Name: css.Name}
	}

	if req.RequestedAt, err = fleetview.RequestReconcile(ctx, c, target); err != nil {
		return err
	}
	if mcs.Spec.Paused {
		fmt.Fprintf(cmd.ErrOrStderr(), "Warning: service set %s is paused; the request is handled once it is resumed (holdfast resume %s)\n", serviceSet, serviceSet)
	}
	if !o.wait {
		return o.print(cmd.OutOrStdout(), req, 0)
	}

	start := time.Now()
	progress := func(context.Context) string { return "" }
	if _, ok := target.(*holdfastv1.MultiClusterService); ok {
		progress = func(ctx context.Context) string {
			return fleetview.PendingClusters(ctx, c, serviceSet, req.RequestedAt)
		}
	}
	if err := waitHandled(ctx, c, target, req.RequestedAt, o.timeout, progress, cmd.ErrOrStderr()); err != nil {
		if wait.Interrupted(err) {
			var pending string
			if _, ok := target.(*holdfastv1.MultiClusterService); ok {
				pending = fleetview.PendingClusters(ctx, c, serviceSet, req.RequestedAt)
			}
			return fmt.Errorf("%s %s did not handle the request %s within %s%s", req.Target.Kind, req.Target.NamespacedName(),
				req.RequestedAt, o.timeout, pending)
		}
		return err
	}
	statuses := []holdfastv1.ClusterServiceStatus{}
	if css, ok := target.(*holdfastv1.ClusterServiceStatus); ok {
		statuses = append(statuses, *css)
	} else if statuses, err = fleetview.ListStatuses(ctx, c, fleetview.Filter{ServiceSet: serviceSet}); err != nil {
		return err
	}
	var drifted int32
	for i := range statuses {
		drifted += statuses[i].Status.DriftedCount
	}
	clusters := len(statuses)
	req.Handled, req.Clusters, req.DriftedObjects = true, &clusters, &drifted
	return o.print(cmd.OutOrStdout(), req, time.Since(start))
}

func (o *correctOptions) print(w io.Writer, req fleetview.CorrectionRequest, took time.Duration) error {
	return o.hub.print(w, fleetview.NewCorrectionRequestList(req),
		func(w io.Writer) error { return fleetview.PrintCorrectionRequest(w, req, took) }, nil)
}

// waitHandled polls obj until its status echoes value, or a later request that superseded it.
// Each time what progress says changes (which clusters have not handled the request yet), it
// writes a line to log: plain lines, fit for a terminal and a CI log alike.
func waitHandled(ctx context.Context, c client.Client, obj client.Object, value string, timeout time.Duration,
	progress func(context.Context) string, log io.Writer) error {
	key := client.ObjectKeyFromObject(obj)
	said := ""
	return wait.PollUntilContextTimeout(ctx, correctPollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		if now := progress(ctx); now != "" && now != said {
			fmt.Fprintf(log, "Waiting%s\n", now)
			said = now
		}
		if err := c.Get(ctx, key, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return false, fmt.Errorf("%s was deleted while waiting: %w", key, err)
			}
			return false, nil //nolint:nilerr // a busy hub is retried until the timeout
		}
		handled := lastHandled(obj)
		requested := obj.GetAnnotations()[holdfastv1.ReconcileRequestedAtAnnotation]
		return handled == value || (requested != value && requested != "" && handled == requested), nil
	})
}

func lastHandled(obj client.Object) string {
	switch o := obj.(type) {
	case *holdfastv1.MultiClusterService:
		return o.Status.LastHandledReconcileAt
	case *holdfastv1.ClusterServiceStatus:
		return o.Status.LastHandledReconcileAt
	}
	return ""
}

// newPauseCommand is `pause` (paused true) or `resume` (false).
func newPauseCommand(paused bool) *cobra.Command {
	o := &hubOptions{}
	use, short := "pause SERVICESET", "Stop all changes by a service set to its clusters (spec.paused)"
	if !paused {
		use, short = "resume SERVICESET", "Let a paused service set change its clusters again"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `. Pausing sets spec.paused of the MultiClusterService: Holdfast
then neither deploys, updates, prunes nor corrects drift on its clusters, and holds correction
requests until it is resumed. Resuming clears spec.paused; the next reconcile catches up.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServiceSetArg(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			res, err := fleetview.SetPaused(cmd.Context(), c, args[0], paused)
			if err != nil {
				return err
			}
			return o.print(cmd.OutOrStdout(), fleetview.NewPauseRequestList(res),
				func(w io.Writer) error { return fleetview.PrintPauseRequest(w, res) }, nil)
		},
	}
	o.addFlags(cmd.Flags())
	registerFlagCompletions(cmd, o)
	return cmd
}

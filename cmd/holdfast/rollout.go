package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller/serviceset"
	"holdfast.dev/holdfast/internal/fleetview"
)

// newRolloutCommand is `holdfast rollout status|approve|resume|abort SERVICESET`.
func newRolloutCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Show, approve, resume or abort the rollout of a service set's new revision (spec.rollout)",
		Long: `A service set with spec.rollout takes each change of its services to its clusters wave by wave.
status shows where the rollout is: its revision and the stable one, each wave's progress and the
clusters that failed. approve lets a revision held for approval (spec.rollout.approval: Manual,
phase Previewing or Previewed) roll out, once ` + "`holdfast diff`" + ` showed what it would change.
resume lets a halted rollout go on: the failures so far no longer count towards the threshold.
abort sends every cluster back to the stable revision until the services change again.`,
	}
	cmd.AddCommand(newRolloutStatusCommand(), newRolloutApproveCommand(), newRolloutRequestCommand("resume", holdfastv1.RolloutResumeAnnotation,
		"Let a halted rollout go on; the failures so far no longer count"),
		newRolloutRequestCommand("abort", holdfastv1.RolloutAbortAnnotation,
			"Send every cluster of a service set back to its stable revision"))
	return cmd
}

func newRolloutStatusCommand() *cobra.Command {
	o := &hubOptions{}
	cmd := &cobra.Command{
		Use:               "status SERVICESET",
		Short:             "Show where the rollout of a service set is",
		Example:           "  holdfast rollout status platform\n  holdfast rollout status platform -o json",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServiceSetArg(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			mcs, _, err := readServiceSet(cmd, o, args[0])
			if err != nil {
				return err
			}
			doc := fleetview.NewRolloutStatusList(mcs)
			return o.print(cmd.OutOrStdout(), doc, func(w io.Writer) error { return fleetview.PrintRolloutStatus(w, doc.Items[0]) }, nil)
		},
	}
	o.addFlags(cmd.Flags())
	registerFlagCompletions(cmd, o)
	return cmd
}

// newRolloutRequestCommand is resume or abort: it sets the annotation to the current time,
// which the MultiClusterService controller handles once and echoes in status.rollout.
func newRolloutRequestCommand(verb, annotation, short string) *cobra.Command {
	o := &hubOptions{}
	cmd := &cobra.Command{
		Use:               verb + " SERVICESET",
		Short:             short,
		Long:              short + ". Sets the annotation " + annotation + " of the MultiClusterService (or of the ServiceSet, NAMESPACE/NAME) to the current time.",
		Example:           "  holdfast rollout " + verb + " platform\n  holdfast rollout " + verb + " team-a/apps",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServiceSetArg(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			mcs, target, err := readServiceSet(cmd, o, args[0])
			if err != nil {
				return err
			}
			if mcs.Spec.Rollout == nil {
				return fmt.Errorf("service set %s has no rollout (spec.rollout): there is nothing to %s", args[0], verb)
			}
			token := time.Now().UTC().Format(time.RFC3339Nano)
			if err := annotateServiceSet(cmd, o, target, annotation, token); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Asked service set %s to %s its rollout (%s=%s); see `holdfast rollout status %s`.\n",
				args[0], verb, annotation, token, args[0])
			return err
		},
	}
	o.addFlags(cmd.Flags())
	registerFlagCompletions(cmd, o)
	return cmd
}

// newRolloutApproveCommand is `holdfast rollout approve SERVICESET [--revision REV]`: it sets
// holdfast.dev/rollout-approve to "<revision> <time>", which the MultiClusterService controller
// handles once: an approval of the revision held for approval starts its rollout, one of any
// other revision approves nothing.
func newRolloutApproveCommand() *cobra.Command {
	o := &hubOptions{}
	var revision string
	cmd := &cobra.Command{
		Use:   "approve SERVICESET",
		Short: "Let a service set's revision held for approval roll out",
		Long: `Approves the revision a service set with spec.rollout.approval: Manual holds for approval (phase
Previewing or Previewed), which then rolls out wave by wave: sets the annotation
` + holdfastv1.RolloutApproveAnnotation + ` of the MultiClusterService to "<revision> <time>". With --revision, approves only
if that is the revision held, so that you approve the one ` + "`holdfast diff`" + ` showed you. Warns,
and approves all the same, when not every cluster has previewed the revision, or one refused it.
Any other phase is refused: there is nothing to approve.`,
		Example:           "  holdfast diff platform\n  holdfast rollout approve platform --revision platform-6f1c9a2b7d\n  holdfast rollout approve team-a/apps   # a tenant's ServiceSet",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServiceSetArg(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			mcs, target, err := readServiceSet(cmd, o, args[0])
			if err != nil {
				return err
			}
			check, err := fleetview.CheckApproval(mcs, revision)
			if err != nil {
				return err
			}
			for _, w := range check.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "Warning: %s\n", w)
			}
			value := holdfastv1.ApproveValue(check.Revision, time.Now())
			if err := annotateServiceSet(cmd, o, target, holdfastv1.RolloutApproveAnnotation, value); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Approved revision %s of %s (%s=%s); see `holdfast rollout status %s`.\n",
				check.Revision, args[0], holdfastv1.RolloutApproveAnnotation, value, args[0])
			return err
		},
	}
	o.addFlags(cmd.Flags())
	registerFlagCompletions(cmd, o)
	cmd.Flags().StringVar(&revision, "revision", "", "approve only if this is the revision held for approval (status.rollout.revision)")
	_ = cmd.RegisterFlagCompletionFunc("revision", completeFromHub(o, heldRevision))
	return cmd
}

// heldRevision completes --revision of approve with the revision SERVICESET holds for approval.
func heldRevision(ctx context.Context, c client.Client, cmd *cobra.Command) ([]string, error) {
	name := cmd.Flags().Arg(0)
	if name == "" {
		return nil, nil
	}
	mcs, _, err := getServiceSet(ctx, c, name)
	if err != nil {
		return nil, err
	}
	check, err := fleetview.CheckApproval(mcs, "")
	if err != nil {
		return nil, nil //nolint:nilerr // nothing to approve: nothing to complete
	}
	return []string{check.Revision}, nil
}

// annotateServiceSet sets annotation to value on target (the service set as readServiceSet
// read it) with a merge patch, with the hub's credentials: the requests of `holdfast rollout`,
// each value handled once by the controller.
func annotateServiceSet(cmd *cobra.Command, o *hubOptions, target client.Object, annotation, value string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annotation: value}}})
	if err != nil {
		return err
	}
	c, err := o.client()
	if err != nil {
		return err
	}
	if err := c.Patch(cmd.Context(), target, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("setting %s on %s: %w", annotation, describeServiceSet(target), err)
	}
	return nil
}

// readServiceSet reads a service set from the hub with o's client (getServiceSet).
func readServiceSet(cmd *cobra.Command, o *hubOptions, name string) (*holdfastv1.MultiClusterService, client.Object, error) {
	if err := o.validate(); err != nil {
		return nil, nil, err
	}
	c, err := o.client()
	if err != nil {
		return nil, nil, err
	}
	return getServiceSet(cmd.Context(), c, name)
}

// getServiceSet reads a service set: the MultiClusterService name, or with "NAMESPACE/NAME" the
// ServiceSet (a tenant's), seen as the MultiClusterService it runs as (serviceSetView). It
// returns the view, and the object the requests of `holdfast rollout` are written on: the
// MultiClusterService, or the ServiceSet (Holdfast carries them over).
func getServiceSet(ctx context.Context, c client.Client, name string) (*holdfastv1.MultiClusterService, client.Object, error) {
	if namespace, set, ok := strings.Cut(name, "/"); ok {
		ss := &holdfastv1.ServiceSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: set}, ss); err != nil {
			return nil, nil, fmt.Errorf("reading ServiceSet %s: %w", name, err)
		}
		return serviceSetView(ss), ss, nil
	}
	mcs := &holdfastv1.MultiClusterService{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mcs); err != nil {
		return nil, nil, fmt.Errorf("reading MultiClusterService %s: %w", name, err)
	}
	return mcs, mcs, nil
}

// serviceSetView is a ServiceSet as the MultiClusterService it runs as: its name
// (status.multiClusterService), annotations, spec and status, which the ServiceSet copies.
func serviceSetView(ss *holdfastv1.ServiceSet) *holdfastv1.MultiClusterService {
	mcs := &holdfastv1.MultiClusterService{Spec: *ss.Spec.DeepCopy(), Status: *ss.Status.MultiClusterServiceStatus.DeepCopy()}
	mcs.Name = cmp.Or(ss.Status.MultiClusterService, serviceset.MultiClusterServiceName(ss.Namespace, ss.Name))
	mcs.Annotations, mcs.Generation = ss.Annotations, ss.Generation
	mcs.Spec.ClusterSelector.Namespaces = []string{ss.Namespace}
	return mcs
}

// describeServiceSet names a service set's object for messages.
func describeServiceSet(obj client.Object) string {
	if ss, ok := obj.(*holdfastv1.ServiceSet); ok {
		return "ServiceSet " + ss.Namespace + "/" + ss.Name
	}
	return "MultiClusterService " + obj.GetName()
}

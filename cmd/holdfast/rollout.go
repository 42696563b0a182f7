package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
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
			mcs, err := readServiceSet(cmd, o, args[0])
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
		Long:              short + ". Sets the annotation " + annotation + " of the MultiClusterService to the current time.",
		Example:           "  holdfast rollout " + verb + " platform",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServiceSetArg(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			mcs, err := readServiceSet(cmd, o, args[0])
			if err != nil {
				return err
			}
			if mcs.Spec.Rollout == nil {
				return fmt.Errorf("service set %s has no rollout (spec.rollout): there is nothing to %s", mcs.Name, verb)
			}
			token := time.Now().UTC().Format(time.RFC3339Nano)
			if err := annotateServiceSet(cmd, o, mcs, annotation, token); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Asked service set %s to %s its rollout (%s=%s); see `holdfast rollout status %s`.\n",
				mcs.Name, verb, annotation, token, mcs.Name)
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
		Example:           "  holdfast diff platform\n  holdfast rollout approve platform --revision platform-6f1c9a2b7d",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeServiceSetArg(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			mcs, err := readServiceSet(cmd, o, args[0])
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
			if err := annotateServiceSet(cmd, o, mcs, holdfastv1.RolloutApproveAnnotation, value); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Approved revision %s of %s (%s=%s); see `holdfast rollout status %s`.\n",
				check.Revision, mcs.Name, holdfastv1.RolloutApproveAnnotation, value, mcs.Name)
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
	mcs := &holdfastv1.MultiClusterService{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mcs); err != nil {
		return nil, fmt.Errorf("reading MultiClusterService %s: %w", name, err)
	}
	check, err := fleetview.CheckApproval(mcs, "")
	if err != nil {
		return nil, nil //nolint:nilerr // nothing to approve: nothing to complete
	}
	return []string{check.Revision}, nil
}

// annotateServiceSet sets annotation to value on mcs with a merge patch, with the hub's
// credentials: the requests of `holdfast rollout`, each value handled once by the controller.
func annotateServiceSet(cmd *cobra.Command, o *hubOptions, mcs *holdfastv1.MultiClusterService, annotation, value string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annotation: value}}})
	if err != nil {
		return err
	}
	c, err := o.client()
	if err != nil {
		return err
	}
	if err := c.Patch(cmd.Context(), mcs, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("setting %s on MultiClusterService %s: %w", annotation, mcs.Name, err)
	}
	return nil
}

// readServiceSet reads the MultiClusterService name from the hub.
func readServiceSet(cmd *cobra.Command, o *hubOptions, name string) (*holdfastv1.MultiClusterService, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	c, err := o.client()
	if err != nil {
		return nil, err
	}
	mcs := &holdfastv1.MultiClusterService{}
	if err := c.Get(cmd.Context(), client.ObjectKey{Name: name}, mcs); err != nil {
		return nil, fmt.Errorf("reading MultiClusterService %s: %w", name, err)
	}
	return mcs, nil
}

package main

import (
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

// newRolloutCommand is `holdfast rollout status|resume|abort SERVICESET`.
func newRolloutCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Show, resume or abort the rollout of a service set's new revision (spec.rollout)",
		Long: `A service set with spec.rollout takes each change of its services to its clusters wave by wave.
status shows where the rollout is: its revision and the stable one, each wave's progress and the
clusters that failed. resume lets a halted rollout go on: the failures so far no longer count
towards the threshold. abort sends every cluster back to the stable revision until the services
change again.`,
	}
	cmd.AddCommand(newRolloutStatusCommand(), newRolloutRequestCommand("resume", holdfastv1.RolloutResumeAnnotation,
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
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annotation: token}}})
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
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Asked service set %s to %s its rollout (%s=%s); see `holdfast rollout status %s`.\n",
				mcs.Name, verb, annotation, token, mcs.Name)
			return err
		},
	}
	o.addFlags(cmd.Flags())
	registerFlagCompletions(cmd, o)
	return cmd
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

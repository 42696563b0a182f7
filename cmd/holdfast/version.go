package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"holdfast.dev/holdfast/internal/version"
)

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print Holdfast's version, commit and commit date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := version.Get()
			switch output {
			case "", "text":
				_, err := fmt.Fprintln(cmd.OutOrStdout(), info)
				return err
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			default:
				return fmt.Errorf("-o %q: want text or json", output)
			}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

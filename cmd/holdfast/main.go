// Command holdfast is Holdfast's one binary: the controller that keeps a fleet of clusters true to
// what was declared, the CLI verbs platform engineers use on it, and a local sandbox of control
// planes for development and demos.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		code, print := exitCode(err)
		if print {
			fmt.Fprintln(os.Stderr, "Error:", err)
		}
		stop()
		os.Exit(code)
	}
}

// defaultLogLevelAnnotation on a command replaces the default of --log-level for it: the demo
// keeps the controller's info logs out of its walk-through unless asked for them.
const defaultLogLevelAnnotation = "holdfast.dev/default-log-level"

type rootOptions struct {
	logLevel  string
	logFormat string
}

func newRootCommand() *cobra.Command {
	o := &rootOptions{}
	root := &cobra.Command{
		Use:           "holdfast",
		Short:         "Keep a fleet of Kubernetes clusters true to centrally declared services",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if level, ok := cmd.Annotations[defaultLogLevelAnnotation]; ok && !cmd.Flags().Changed("log-level") {
				o.logLevel = level
			}
			return o.setupLogging()
		},
	}
	// A mistyped flag shows the command's usage; errors of the work itself do not.
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w\n\n%s", err, cmd.UsageString())
	})
	root.PersistentFlags().StringVar(&o.logLevel, "log-level", "info", "log level: debug, info or error")
	root.PersistentFlags().StringVar(&o.logFormat, "log-format", "console", "log format: console or json")
	root.AddCommand(newControllerCommand(), newSandboxCommand(), newDemoCommand(), newVersionCommand(), newInstallCommand(),
		newStatusCommand(), newDriftCommand(), newHistoryCommand(), newCorrectCommand(), newPauseCommand(true), newPauseCommand(false), newClusterCommand(), newRolloutCommand(), newDiffCommand(), newUICommand(), newAgentCommand())
	return root
}

func (o *rootOptions) setupLogging() error {
	var level zapcore.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: %w", o.logLevel, err)
	}
	opts := []zap.Opts{zap.Level(level), zap.WriteTo(os.Stderr)}
	switch o.logFormat {
	case "json":
		opts = append(opts, zap.UseDevMode(false))
	case "console":
		opts = append(opts, zap.UseDevMode(false), zap.ConsoleEncoder())
	default:
		return fmt.Errorf("--log-format %q: want console or json", o.logFormat)
	}
	logger := zap.New(opts...)
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	return nil
}

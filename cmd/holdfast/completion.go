package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Shell completion: `holdfast completion bash|zsh|fish|powershell` is cobra's default command,
// which writes a script that calls the hidden `holdfast __complete ARGS...` on every TAB. The
// functions here answer it for the fleet verbs: the fixed values of -o, and the names of the
// Clusters, their namespaces and the service sets, read from the hub that the command line
// names (--kubeconfig, --context). A TAB must never hang the shell nor print an error into it:
// reading the hub is bounded by completionTimeout, and any failure completes nothing.

// completionTimeout bounds everything a completion does on the hub, from loading the kubeconfig
// to the last List. A variable for the tests only.
var completionTimeout = 5 * time.Second

// outputCompletions are the values of -o, each with what it is for.
var outputCompletions = []cobra.Completion{
	cobra.CompletionWithDesc(outputTable, "a table for people"),
	cobra.CompletionWithDesc(outputWide, "the table with more columns, nothing cut"),
	cobra.CompletionWithDesc(outputJSON, "the document scripts depend on"),
	cobra.CompletionWithDesc(outputYAML, "the json document as YAML"),
	cobra.CompletionWithDesc(outputName, "one object a line, for pipes"),
}

// registerFlagCompletions completes the values of the flags cmd has among -o, --cluster,
// -n/--namespace and --service-set. Call it once per command, after adding the flags:
// RegisterFlagCompletionFunc fails only for a flag cmd lacks, which is skipped, or for a second
// registration (TestCompletionIsRegistered checks every verb).
func registerFlagCompletions(cmd *cobra.Command, hub *hubOptions) {
	completions := map[string]cobra.CompletionFunc{
		"output":      cobra.FixedCompletions(outputCompletions, cobra.ShellCompDirectiveNoFileComp),
		"cluster":     completeFromHub(hub, clusterNames),
		"namespace":   completeFromHub(hub, clusterNamespaces),
		"service-set": completeFromHub(hub, serviceSetNames),
	}
	for flag, f := range completions {
		if cmd.Flags().Lookup(flag) == nil {
			continue
		}
		_ = cmd.RegisterFlagCompletionFunc(flag, f)
	}
}

// completeServiceSetArg completes SERVICESET, the one argument of correct, pause and resume.
func completeServiceSetArg(hub *hubOptions) cobra.CompletionFunc {
	names := completeFromHub(hub, serviceSetNames)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(cmd, args, toComplete)
	}
}

// hubNames lists candidate values from the hub; cmd has the command line's flags parsed.
type hubNames func(ctx context.Context, c client.Client, cmd *cobra.Command) ([]string, error)

// completeFromHub completes with the names list returns that start with what was typed. The
// hub is read in a goroutine that is abandoned after completionTimeout: loading a kubeconfig can
// run a credential plugin, which no context bounds, and the process ends right after anyway.
func completeFromHub(hub *hubOptions, list hubNames) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		parent := cmd.Context()
		if parent == nil {
			parent = context.Background()
		}
		ctx, cancel := context.WithTimeout(parent, completionTimeout)
		defer cancel()
		type result struct {
			names []string
			err   error
		}
		done := make(chan result, 1)
		go func() {
			c, err := hub.client()
			if err != nil {
				done <- result{err: err}
				return
			}
			names, err := list(ctx, c, cmd)
			done <- result{names, err}
		}()
		var r result
		select {
		case r = <-done:
		case <-ctx.Done():
			r.err = fmt.Errorf("reading the hub: %w", ctx.Err())
		}
		if r.err != nil {
			cobra.CompErrorln(r.err.Error()) // stderr, which shells do not show as a completion
			return nil, cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for _, n := range r.names {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// clusterNames are the Clusters as NAMESPACE/NAME, in the namespace -n names if it is set, and
// then also as NAME, which --cluster accepts with -n.
func clusterNames(ctx context.Context, c client.Client, cmd *cobra.Command) ([]string, error) {
	namespace, _ := cmd.Flags().GetString("namespace")
	clusters, err := listClusters(ctx, c, namespace)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, cl := range clusters {
		names = append(names, cl.Namespace+"/"+cl.Name)
	}
	if namespace != "" {
		for _, cl := range clusters {
			names = append(names, cl.Name)
		}
	}
	return sorted(names), nil
}

// clusterNamespaces are the namespaces that hold a Cluster.
func clusterNamespaces(ctx context.Context, c client.Client, _ *cobra.Command) ([]string, error) {
	clusters, err := listClusters(ctx, c, "")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, cl := range clusters {
		names = append(names, cl.Namespace)
	}
	return sorted(names), nil
}

// serviceSetNames are the MultiClusterServices.
func serviceSetNames(ctx context.Context, c client.Client, _ *cobra.Command) ([]string, error) {
	list := &holdfastv1.MultiClusterServiceList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing MultiClusterServices: %w", err)
	}
	var names []string
	for _, m := range list.Items {
		names = append(names, m.Name)
	}
	return sorted(names), nil
}

func listClusters(ctx context.Context, c client.Client, namespace string) ([]holdfastv1.Cluster, error) {
	list := &holdfastv1.ClusterList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing Clusters: %w", err)
	}
	return list.Items, nil
}

// sorted sorts names and drops repeats.
func sorted(names []string) []string {
	slices.Sort(names)
	return slices.Compact(names)
}

package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	helmvalues "helm.sh/helm/v4/pkg/cli/values"

	"holdfast.dev/holdfast/internal/install"
)

type installOptions struct {
	export     bool
	kubeconfig string
	namespace  string
	values     helmvalues.Options
	timeout    time.Duration
}

func newInstallCommand() *cobra.Command {
	o := &installOptions{}
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install the Holdfast controller on a hub, or print the manifests that do (--export)",
		Long: `Install renders the Holdfast Helm chart built into this binary (charts/holdfast) with its
default values, the ones -f and --set give, and the release namespace, and applies the result to the
hub with server-side apply: CRDs and the namespace first, then the rest. With --export it prints the
manifests instead, for kubectl apply --server-side or a GitOps repository. Running it again upgrades
an installation; CRDs are never deleted.`,
		Example: `  holdfast install --export | kubectl apply --server-side -f -
  holdfast install --set replicas=3 --set controller.concurrency=20
  holdfast install --export -f values.yaml > holdfast.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			values, err := o.values.MergeValues(nil)
			if err != nil {
				return fmt.Errorf("reading the values: %w", err)
			}
			manifests, err := install.Manifests(cmd.Context(), install.Options{Namespace: o.namespace, Values: values})
			if err != nil {
				return err
			}
			if o.export {
				_, err := fmt.Fprint(cmd.OutOrStdout(), manifests)
				return err
			}
			objs, err := install.Objects(manifests)
			if err != nil {
				return err
			}
			cfg, err := loadHubConfig(o.kubeconfig)
			if err != nil {
				return err
			}
			changes, err := install.Apply(cmd.Context(), cfg, objs, o.timeout)
			for _, c := range changes {
				fmt.Fprintln(cmd.OutOrStdout(), c)
			}
			return err
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.export, "export", false, "print the manifests instead of applying them")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the hub (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)")
	fs.StringVarP(&o.namespace, "namespace", "n", install.DefaultNamespace, "namespace of the controller")
	fs.StringArrayVarP(&o.values.ValueFiles, "values", "f", nil, "chart values from a YAML file (can repeat)")
	fs.StringArrayVar(&o.values.Values, "set", nil, "a chart value, as helm --set takes it: key=value[,key=value] (can repeat)")
	fs.StringArrayVar(&o.values.StringValues, "set-string", nil, "a chart value that stays a string, as helm --set-string takes it (can repeat)")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long to wait for the CRDs and the namespace to be ready")
	return cmd
}

package main

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/webui"
)

type uiOptions struct {
	kubeconfig string
	context    string
	address    string
	namespace  string
	prometheus string
}

func newUICommand() *cobra.Command {
	o := &uiOptions{}
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve a web view of the fleet and its drift on this machine",
		Long: `Serves a web page showing the fleet (clusters by service sets: readiness, health, drift, last
change), the drift feed with field diffs and authors, and charts, updated live. It reads the hub
and acts ("Correct now", "Resume", pausing a service set) with your own kubeconfig, so the hub's
RBAC decides what you may see and do, as with kubectl; a refusal shows the API server's reason.
It listens on loopback by default: whoever reaches the page acts with your credentials.
A tenant whose rights stop at one namespace gives it with -n.`,
		Example: `  holdfast ui
  holdfast ui --kubeconfig hub.kubeconfig --address 127.0.0.1:9000
  holdfast ui --prometheus-url http://localhost:9090   # e.g. after kubectl port-forward svc/prometheus 9090`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := fleetview.HubConfig(o.kubeconfig, o.context)
			if err != nil {
				return err
			}
			srv, err := webui.New(cfg, ctrl.Log.WithName("ui"), webui.InNamespace(o.namespace), webui.WithPrometheus(o.prometheus))
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", o.address)
			if err != nil {
				return fmt.Errorf("listening on --address %s: %w", o.address, err)
			}
			if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
				fmt.Fprintf(cmd.ErrOrStderr(), "Warning: %s is not a loopback address; whoever reaches it acts on the hub with your credentials\n", o.address)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Holdfast UI: http://%s/ (Ctrl-C to stop)\n", ln.Addr())
			return srv.Serve(cmd.Context(), ln)
		},
	}
	cmd.Flags().StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the hub (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)")
	cmd.Flags().StringVar(&o.context, "context", "", "kubeconfig context to use (default: the current context)")
	cmd.Flags().StringVar(&o.address, "address", webui.DefaultAddress, "address to serve the page on")
	cmd.Flags().StringVar(&o.prometheus, "prometheus-url", "", "a Prometheus server scraping the controller: the charts then cover every correction of the last 24h (default: the drift records kept on the hub)")
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "show only the Clusters of this namespace (a tenant's, whose RBAC stops there); default: all")
	return cmd
}

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
	hosts      []string
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
It listens on loopback by default and prints the URL to open: it carries a secret made for this
run (?token=...), which the first visit exchanges for a cookie; whoever has it acts with your
credentials, so do not share it. Requests naming another host than the server's are refused.
A tenant whose rights stop at one namespace gives it with -n.`,
		Example: `  holdfast ui
  holdfast ui --kubeconfig hub.kubeconfig --address 127.0.0.1:9000
  holdfast ui --prometheus-url http://localhost:9090   # e.g. after kubectl port-forward svc/prometheus 9090
  holdfast ui --address 0.0.0.0:8090 --allowed-host ui.example.internal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := fleetview.HubConfig(o.kubeconfig, o.context)
			if err != nil {
				return err
			}
			srv, err := webui.New(cfg, ctrl.Log.WithName("ui"), webui.InNamespace(o.namespace), webui.WithPrometheus(o.prometheus), webui.WithAllowedHosts(o.hosts...))
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", o.address)
			if err != nil {
				return fmt.Errorf("listening on --address %s: %w", o.address, err)
			}
			if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
				fmt.Fprintf(cmd.ErrOrStderr(), "Warning: %s is not a loopback address; the page, its token and your actions cross the network unencrypted (an ssh tunnel to a loopback address does not)\n", o.address)
			}
			urls := srv.URLs(ln.Addr())
			fmt.Fprintf(cmd.OutOrStdout(), "Holdfast UI: %s (Ctrl-C to stop)\n", urls[0])
			for _, u := range urls[1:] {
				fmt.Fprintf(cmd.OutOrStdout(), "  or: %s\n", u)
			}
			return srv.Serve(cmd.Context(), ln)
		},
	}
	cmd.Flags().StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the hub (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)")
	cmd.Flags().StringVar(&o.context, "context", "", "kubeconfig context to use (default: the current context)")
	cmd.Flags().StringVar(&o.address, "address", webui.DefaultAddress, "address to serve the page on")
	cmd.Flags().StringSliceVar(&o.hosts, "allowed-host", nil, "another name (or address) the page is opened by, e.g. a DNS name of this machine; requests naming any other are refused (accepted without it: localhost, loopback addresses, the address listened on and, off loopback, this machine's hostname; on 0.0.0.0, any address)")
	cmd.Flags().StringVar(&o.prometheus, "prometheus-url", "", "a Prometheus server scraping the controller: the charts then cover every correction of the last 24h (default: the drift records kept on the hub)")
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "show only the Clusters of this namespace (a tenant's, whose RBAC stops there); default: all")
	return cmd
}

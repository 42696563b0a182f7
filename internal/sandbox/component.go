package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
)

// servedComponent is a control-plane component that reaches the API server with a kubeconfig of
// its own and serves /healthz over TLS on a port picked when it starts: kube-controller-manager
// and kube-scheduler.
type servedComponent struct {
	// proc names the process (its log, its errors); binary is the one it runs.
	proc, binary string
	// kubeconfigFile is its kubeconfig's file name in the control plane's directory.
	kubeconfigFile string
	// identity is the client certificate its kubeconfig authenticates with; nil is the admin's.
	identity *keyPair
	// args are its flags when serving on port.
	args func(port int) []string
	// slot is where the control plane keeps its process.
	slot **process
	// ready, if set, is a readiness check beyond /healthz, made with the poll client.
	ready func(client *http.Client) readinessCheck
}

// startServed writes sc's kubeconfig, runs it and waits until it serves /healthz and passes its
// own readiness check, trying another port if the one picked was taken meanwhile.
func (c *ControlPlane) startServed(ctx context.Context, sc servedComponent) error {
	identity := c.pki.admin
	if sc.identity != nil {
		identity = *sc.identity
	}
	kubeconfig, err := kubeconfigFor(c.name, c.name, c.name+"-"+sc.proc, c.host, c.pki.ca.keyPair.Cert, identity)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.dir, sc.kubeconfigFile), kubeconfig, 0o600); err != nil {
		return fmt.Errorf("writing %s kubeconfig: %w", sc.proc, err)
	}
	client, err := newPollClient(c.pki.ca.keyPair.Cert, &c.pki.admin)
	if err != nil {
		return fmt.Errorf("%s readiness client: %w", sc.proc, err)
	}
	return retryOnPortConflict(func() (*process, error) {
		port, err := pickPort()
		if err != nil {
			return nil, err
		}
		p, err := c.launch(sc.proc, sc.binary, sc.args(port))
		if err != nil {
			return nil, err
		}
		c.setProcess(sc.slot, p)
		healthz := httpOK(client, fmt.Sprintf("https://127.0.0.1:%d/healthz", port))
		ready := healthz
		if sc.ready != nil {
			extra := sc.ready(client)
			ready = func(ctx context.Context) error {
				if err := healthz(ctx); err != nil {
					return err
				}
				return extra(ctx)
			}
		}
		if err := waitReady(ctx, c.stopping, p, ready); err != nil {
			return p, errors.Join(err, p.stop())
		}
		return p, nil
	})
}

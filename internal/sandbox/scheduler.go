package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

const schedulerKubeconfigFile = "kube-scheduler.kubeconfig"

func (c *ControlPlane) schedulerArgs(port int) []string {
	return []string{
		"--kubeconfig=" + filepath.Join(c.dir, schedulerKubeconfigFile),
		"--leader-elect=false",
		// Served for the same reason as kube-controller-manager's: /healthz tells a (re)start
		// came up, and the certificate is ours so the probe can verify it. /healthz is always
		// allowed, so no delegated authentication is configured.
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + c.pki.path(schedulerServingCrtFile),
		"--tls-private-key-file=" + c.pki.path(schedulerServingKeyFile),
		"--cert-dir=" + c.pki.dir,
	}
}

// startScheduler runs kube-scheduler, which binds pods to the simulated nodes, and waits until
// it serves /healthz.
func (c *ControlPlane) startScheduler(ctx context.Context) error {
	kubeconfig, err := kubeconfigFor(c.name, c.name, c.name+"-kube-scheduler", c.host, c.pki.ca.keyPair.Cert, c.pki.admin)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.dir, schedulerKubeconfigFile), kubeconfig, 0o600); err != nil {
		return fmt.Errorf("writing kube-scheduler kubeconfig: %w", err)
	}
	client, err := newPollClient(c.pki.ca.keyPair.Cert, &c.pki.admin)
	if err != nil {
		return fmt.Errorf("kube-scheduler readiness client: %w", err)
	}
	return retryOnPortConflict(func() (*process, error) {
		port, err := pickPort()
		if err != nil {
			return nil, err
		}
		p, err := c.launch("kube-scheduler", schedulerBinary, c.schedulerArgs(port))
		if err != nil {
			return nil, err
		}
		c.setProcess(&c.scheduler, p)
		if err := waitReady(ctx, c.stopping, p, httpOK(client, fmt.Sprintf("https://127.0.0.1:%d/healthz", port))); err != nil {
			return p, errors.Join(err, p.stop())
		}
		return p, nil
	})
}

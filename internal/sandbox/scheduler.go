package sandbox

import (
	"context"
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
	return c.startServed(ctx, servedComponent{proc: "kube-scheduler", binary: schedulerBinary,
		kubeconfigFile: schedulerKubeconfigFile, args: c.schedulerArgs, slot: &c.scheduler})
}

package sandbox

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
)

const kcmKubeconfigFile = "kube-controller-manager.kubeconfig"

func (c *ControlPlane) controllerManagerArgs(port int) []string {
	kubeconfig := filepath.Join(c.dir, kcmKubeconfigFile)
	return []string{
		"--kubeconfig=" + kubeconfig,
		// Each controller acts as its own ServiceAccount, as on kubeadm clusters (see
		// controllerManagerUser).
		"--use-service-account-credentials=true",
		// Without kubelets nobody consumes legacy token secrets; the token controller would
		// only add noise and a second signer of tokens.
		"--controllers=*,-serviceaccount-token",
		"--service-account-private-key-file=" + c.pki.path(saPrivateKeyFile),
		"--root-ca-file=" + c.pki.path(caCertFile),
		"--leader-elect=false",
		// Serving is kept (not --secure-port=0) because /healthz is how a restart is known
		// to have come up; the certificate is ours so the probe can verify it. There is no
		// --authentication-kubeconfig: delegated authentication would want the front-proxy
		// CA the sandbox API server does not have, and /healthz is always allowed anyway.
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + c.pki.path(kcmServingCrtFile),
		"--tls-private-key-file=" + c.pki.path(kcmServingKeyFile),
		"--cert-dir=" + c.pki.dir,
		// Lets the CSR signing controller approve-and-sign like a real cluster's.
		"--cluster-signing-cert-file=" + c.pki.path(caCertFile),
		"--cluster-signing-key-file=" + c.pki.path(caKeyFile),
	}
}

// startControllerManager runs kube-controller-manager and waits until it serves /healthz and
// its service account controller has created the "default" ServiceAccount in the "default"
// namespace, which shows its controllers reach the API server.
func (c *ControlPlane) startControllerManager(ctx context.Context) error {
	defaultSA := c.host + "/api/v1/namespaces/default/serviceaccounts/default"
	return c.startServed(ctx, servedComponent{proc: "kube-controller-manager", binary: controllerManagerBinary,
		kubeconfigFile: kcmKubeconfigFile, identity: &c.pki.controllerManager, args: c.controllerManagerArgs, slot: &c.controllerManager,
		ready: func(client *http.Client) readinessCheck { return httpOK(client, defaultSA) }})
}

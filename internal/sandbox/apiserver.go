package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// serviceAccountIssuer is the issuer real clusters use by default, so tokens look the same as
// in production.
const serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// noAdmissionPolicies switches off the admission policy resources of
// admissionregistration.k8s.io/v1 (the rest of the group, webhook configurations, stays on) and
// the admission plugins that run them: with the resources off and the plugins on, the plugins'
// informers never sync and the API server refuses every request ("not yet ready to handle
// request") until a post-start hook fails and it exits.
var noAdmissionPolicies = []string{
	"--runtime-config=admissionregistration.k8s.io/v1/mutatingadmissionpolicies=false," +
		"admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings=false," +
		"admissionregistration.k8s.io/v1/validatingadmissionpolicies=false," +
		"admissionregistration.k8s.io/v1/validatingadmissionpolicybindings=false",
	"--disable-admission-plugins=MutatingAdmissionPolicy,ValidatingAdmissionPolicy",
}

func (c *ControlPlane) apiServerArgs(port int) []string {
	args := []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + c.pki.path(servingCertFile),
		"--tls-private-key-file=" + c.pki.path(servingKeyFile),
		"--client-ca-file=" + c.pki.path(caCertFile),
		"--etcd-servers=" + c.etcdURL,
		"--service-account-issuer=" + serviceAccountIssuer,
		"--service-account-key-file=" + c.pki.path(saPublicKeyFile),
		"--service-account-signing-key-file=" + c.pki.path(saPrivateKeyFile),
		"--service-cluster-ip-range=" + serviceClusterIPRange,
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		// The endpoint reconciler would publish the advertise address as the endpoint of the
		// "kubernetes" Service, and Endpoints validation rejects loopback addresses, so it
		// would log an error every ten seconds. Nothing in the sandbox dials the Service.
		"--endpoint-reconciler-type=none",
		// Anything the API server would write on its own (self-signed certs) stays in Dir
		// instead of /var/run/kubernetes.
		"--cert-dir=" + c.pki.dir,
	}
	if c.noAdmissionPolicies {
		args = append(args, noAdmissionPolicies...)
	}
	return args
}

// startAPIServer runs kube-apiserver and waits for /readyz. With a fixed port (a restart,
// where kubeconfigs already point at it) a port conflict is retried on the same port;
// otherwise every attempt takes a fresh one.
func (c *ControlPlane) startAPIServer(ctx context.Context, fixedPort int) error {
	client, err := newPollClient(c.pki.ca.keyPair.Cert, &c.pki.admin)
	if err != nil {
		return fmt.Errorf("kube-apiserver readiness client: %w", err)
	}
	return retryOnPortConflict(func() (*process, error) {
		port := fixedPort
		if port == 0 {
			if port, err = pickPort(); err != nil {
				return nil, err
			}
		}
		p, err := c.launch("kube-apiserver", apiServerBinary, c.apiServerArgs(port))
		if err != nil {
			return nil, err
		}
		c.setProcess(&c.apiServer, p)
		host := fmt.Sprintf("https://127.0.0.1:%d", port)
		if err := waitReady(ctx, c.stopping, p, httpOK(client, host+"/readyz")); err != nil {
			return p, errors.Join(err, p.stop())
		}
		if fixedPort == 0 {
			// Only the first start sets the address; restarts keep it, and accessors read it
			// without locks.
			c.apiPort, c.host = port, host
		}
		return p, nil
	})
}

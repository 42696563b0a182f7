package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// File names inside <Dir>/pki; the processes read them from disk, so they are fixed.
const (
	caCertFile              = "ca.crt"
	caKeyFile               = "ca.key"
	servingCertFile         = "apiserver.crt"
	servingKeyFile          = "apiserver.key"
	adminCertFile           = "admin.crt"
	adminKeyFile            = "admin.key"
	kcmServingCrtFile       = "kube-controller-manager.crt"
	kcmServingKeyFile       = "kube-controller-manager.key"
	schedulerServingCrtFile = "kube-scheduler.crt"
	schedulerServingKeyFile = "kube-scheduler.key"
	saPrivateKeyFile        = "sa.key"
	saPublicKeyFile         = "sa.pub"
)

// adminUser and adminGroup make the admin identity a member of system:masters, which RBAC
// lets do anything without a binding, as kubeadm's admin.conf does.
const (
	adminUser  = "admin"
	adminGroup = "system:masters"
)

// controllerManagerUser is kube-controller-manager's identity, as on a kubeadm cluster: the
// API server's bootstrap RBAC binds it the system:kube-controller-manager role, and with
// --use-service-account-credentials each controller acts as its own ServiceAccount in
// kube-system (system:serviceaccount:kube-system:generic-garbage-collector, ...), so policies
// and audit logs see the cluster's own controllers as they would on a real cluster.
const controllerManagerUser = "system:kube-controller-manager"

// pki is the key material of one control plane, kept in memory for clients and on disk for
// the processes.
type pki struct {
	dir   string
	ca    *certificateAuthority
	admin keyPair
	// controllerManager is the client certificate of controllerManagerUser.
	controllerManager keyPair
}

func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating pki directory: %w", err)
	}
	ca, err := newCertificateAuthority("holdfast-sandbox-ca")
	if err != nil {
		return nil, err
	}
	loopback := []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback}
	serving, err := ca.newServingCert("kube-apiserver",
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		append(loopback, net.ParseIP(inClusterServiceIP)))
	if err != nil {
		return nil, err
	}
	kcmServing, err := ca.newServingCert("kube-controller-manager", []string{"localhost"}, loopback)
	if err != nil {
		return nil, err
	}
	schedulerServing, err := ca.newServingCert("kube-scheduler", []string{"localhost"}, loopback)
	if err != nil {
		return nil, err
	}
	admin, err := ca.newClientCert(adminUser, []string{adminGroup})
	if err != nil {
		return nil, err
	}
	controllerManager, err := ca.newClientCert(controllerManagerUser, nil)
	if err != nil {
		return nil, err
	}
	saPrivate, saPublic, err := newServiceAccountKey()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		caCertFile:              ca.keyPair.Cert,
		caKeyFile:               ca.keyPair.Key,
		servingCertFile:         serving.Cert,
		servingKeyFile:          serving.Key,
		adminCertFile:           admin.Cert,
		adminKeyFile:            admin.Key,
		kcmServingCrtFile:       kcmServing.Cert,
		kcmServingKeyFile:       kcmServing.Key,
		schedulerServingCrtFile: schedulerServing.Cert,
		schedulerServingKeyFile: schedulerServing.Key,
		saPrivateKeyFile:        saPrivate,
		saPublicKeyFile:         saPublic,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return &pki{dir: dir, ca: ca, admin: admin, controllerManager: controllerManager}, nil
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

package onboard

import (
	"context"
	"errors"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Names of what Grant makes on the target.
const (
	Namespace      = "holdfast-system"
	ServiceAccount = "holdfast-manager"
	// ManagedByLabel marks the RBAC objects Grant made, so Revoke finds them all.
	ManagedByLabel = "holdfast.dev/onboarded"
	// DefaultTokenDuration is how long the token Grant requests is valid.
	DefaultTokenDuration = 365 * 24 * time.Hour
)

// Options say what Holdfast may do on the target.
type Options struct {
	// Namespaces, if set, limits Holdfast to these namespaces (each must exist): a Role with
	// every permission in each, nothing cluster-wide. Empty: every permission cluster-wide.
	Namespaces []string
	// TokenDuration is the validity asked for the token; DefaultTokenDuration when zero. The
	// API server may shorten it. Run Grant again to rotate it.
	TokenDuration time.Duration
}

// Grant creates (or updates) Holdfast's ServiceAccount and permissions on the target that cs
// and cfg reach, and returns a kubeconfig for it: cfg's server and CA, the ServiceAccount's
// token.
func Grant(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, opts Options) ([]byte, error) {
	if opts.TokenDuration <= 0 {
		opts.TokenDuration = DefaultTokenDuration
	}
	ca, err := caData(cfg)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{ManagedByLabel: "true"}
	if err := ensure(cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{})); err != nil {
		return nil, fmt.Errorf("creating namespace %s on the target: %w", Namespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: ServiceAccount, Labels: labels}}
	if err := ensure(cs.CoreV1().ServiceAccounts(Namespace).Create(ctx, sa, metav1.CreateOptions{})); err != nil {
		return nil, fmt.Errorf("creating ServiceAccount %s/%s on the target: %w", Namespace, ServiceAccount, err)
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: Namespace, Name: ServiceAccount}}
	everything := []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}
	meta := metav1.ObjectMeta{Name: ServiceAccount, Labels: labels}
	if len(opts.Namespaces) == 0 {
		if err := apply(ctx, cs, &rbacv1.ClusterRole{ObjectMeta: meta, Rules: append(everything,
			rbacv1.PolicyRule{NonResourceURLs: []string{"*"}, Verbs: []string{"get"}})}); err != nil {
			return nil, err
		}
		if err := apply(ctx, cs, &rbacv1.ClusterRoleBinding{ObjectMeta: meta, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ServiceAccount}}); err != nil {
			return nil, err
		}
	}
	for _, ns := range opts.Namespaces {
		if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			return nil, fmt.Errorf("namespace %s on the target: %w (create it first: a namespace-limited identity cannot)", ns, err)
		}
		m := meta
		m.Namespace = ns
		if err := apply(ctx, cs, &rbacv1.Role{ObjectMeta: m, Rules: everything}); err != nil {
			return nil, err
		}
		if err := apply(ctx, cs, &rbacv1.RoleBinding{ObjectMeta: m, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: ServiceAccount}}); err != nil {
			return nil, err
		}
	}
	seconds := int64(opts.TokenDuration.Seconds())
	tr, err := cs.CoreV1().ServiceAccounts(Namespace).CreateToken(ctx, ServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token for ServiceAccount %s/%s on the target: %w", Namespace, ServiceAccount, err)
	}
	return kubeconfig(cfg.Host, ca, cfg.TLSClientConfig.ServerName, ServiceAccount, tr.Status.Token, "")
}

// kubeconfig is a self-contained kubeconfig: the server with its CA, a token, and the namespace
// of its context, if any.
func kubeconfig(server string, ca []byte, serverName, user, token, namespace string) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["target"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca, TLSServerName: serverName}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["holdfast"] = &clientcmdapi.Context{Cluster: "target", AuthInfo: user, Namespace: namespace}
	kc.CurrentContext = "holdfast"
	out, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	return out, nil
}

// caData returns the CA certificates cfg trusts, embedded: the kubeconfig Holdfast gets must be
// self-contained.
func caData(cfg *rest.Config) ([]byte, error) {
	if err := rest.LoadTLSFiles(cfg); err != nil {
		return nil, fmt.Errorf("reading the target's CA: %w", err)
	}
	if len(cfg.CAData) == 0 && !cfg.Insecure {
		return nil, errors.New("the target's kubeconfig names no certificate authority; Holdfast needs one to trust the API server")
	}
	return cfg.CAData, nil
}

// ensure treats "already exists" as done.
func ensure[T any](_ T, err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

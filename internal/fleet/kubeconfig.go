package fleet

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ErrInvalidKubeconfig is returned for data that is not a kubeconfig Holdfast can use.
var ErrInvalidKubeconfig = errors.New("invalid kubeconfig")

// ErrNoCurrentContext is returned for a kubeconfig that names no current context.
var ErrNoCurrentContext = errors.New("kubeconfig has no current context")

// KubeconfigError says why a kubeconfig was refused, without quoting it.
type KubeconfigError struct {
	// Kind is ErrInvalidKubeconfig or ErrNoCurrentContext.
	Kind error
	// Detail says what to fix. It never contains the kubeconfig's content.
	Detail string
}

func (e *KubeconfigError) Error() string { return e.Kind.Error() + ": " + e.Detail }

// Unwrap lets errors.Is match the kind.
func (e *KubeconfigError) Unwrap() error { return e.Kind }

// RESTConfigFromKubeconfig is KubeconfigPolicy{}.RESTConfig of no Cluster: no credential plugin
// is run.
func RESTConfigFromKubeconfig(data []byte) (*rest.Config, error) {
	return KubeconfigPolicy{}.RESTConfig("", data)
}

// KubeconfigPolicy is what a Cluster's kubeconfig may ask of the controller beyond what it holds
// itself.
type KubeconfigPolicy struct {
	// AllowedExecPlugins names the exec credential plugins (the usual cloud setup: EKS, GKE,
	// AKS) a kubeconfig may use, by command name, as the operator installed them on the
	// controller's PATH. A kubeconfig's plugin runs only if its command is exactly one of these
	// names (never a path), with the kubeconfig's arguments, no environment of its own (set what
	// the plugin needs on the controller) and no interaction, and only for Clusters of the
	// namespaces AmbientCredentials allows. Empty: none runs.
	AllowedExecPlugins []string
	// AmbientCredentials reports whether Clusters of a namespace may use credentials of the
	// controller's rather than of their kubeconfig's own: the AllowedExecPlugins, which run with
	// the controller's environment and so mint tokens from its cloud identity
	// (tenancy.Policy.AmbientCredentials decides). Nil: no namespace may.
	AmbientCredentials func(namespace string) bool
	// ForbidInsecureSkipTLSVerify refuses kubeconfigs whose cluster sets
	// insecure-skip-tls-verify: without it, anyone between the controller and the target could
	// read and change what Holdfast sends, credentials included.
	ForbidInsecureSkipTLSVerify bool
}

// RESTConfig parses and validates the kubeconfig of a Cluster of namespace ns and returns the
// REST config of its current context. The kubeconfig must be self-contained: files on the
// controller's disk, auth-provider plugins and exec plugins the policy does not allow (by name,
// and to the Cluster's namespace) are refused, since a Cluster's author must not be able to make
// the controller read its own files, run commands, or lend it the controller's identity.
func (p KubeconfigPolicy) RESTConfig(ns string, data []byte) (*rest.Config, error) {
	if len(data) == 0 {
		return nil, &KubeconfigError{Kind: ErrInvalidKubeconfig, Detail: "it is empty"}
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		// The parser's error may quote the input, which may hold credentials: do not pass it on.
		return nil, &KubeconfigError{Kind: ErrInvalidKubeconfig, Detail: "it could not be parsed as a kubeconfig (YAML or JSON of kind Config)"}
	}
	if cfg.CurrentContext == "" {
		return nil, &KubeconfigError{Kind: ErrNoCurrentContext, Detail: "set current-context to the context Holdfast should use"}
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil, &KubeconfigError{Kind: ErrInvalidKubeconfig, Detail: fmt.Sprintf("current-context %q names no context in the kubeconfig", cfg.CurrentContext)}
	}
	if err := p.checkSelfContained(ns, cfg, ctx); err != nil {
		return nil, err
	}
	restCfg, err := clientcmd.NewNonInteractiveClientConfig(*cfg, cfg.CurrentContext, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		// clientcmd's validation errors name contexts, clusters and users, but quote a URL
		// they cannot parse, which may carry credentials: checkURLs refuses those first, and
		// withoutCredentials is the last line of defence.
		return nil, &KubeconfigError{Kind: ErrInvalidKubeconfig, Detail: withoutCredentials(err.Error(), cfg, ctx)}
	}
	return restCfg, nil
}

// checkURLs refuses a server or proxy-url that client-go could not use, naming the field and
// the cluster entry but never the value: a URL may carry credentials (http://user:password@proxy),
// and client-go's own errors quote it whole. The server is parsed as client-go's REST client
// does (a URL, or a host:port pair taken as https), the proxy-url as clientcmd does (a URL of
// scheme http, https or socks5).
func checkURLs(name string, cluster *clientcmdapi.Cluster) error {
	invalid := func(format string, args ...any) error {
		return &KubeconfigError{Kind: ErrInvalidKubeconfig, Detail: fmt.Sprintf(format, args...)}
	}
	if u, err := url.Parse(cluster.Server); err != nil || u.Scheme == "" || u.Host == "" {
		u, err = url.Parse("https://" + cluster.Server)
		if err != nil || (u.Path != "" && u.Path != "/") {
			return invalid("cluster %q has a server that is neither a URL nor a host:port pair "+
				"(the value is not shown: it may hold credentials)", name)
		}
	}
	if cluster.ProxyURL == "" {
		return nil
	}
	u, err := url.Parse(cluster.ProxyURL)
	if err != nil {
		return invalid("cluster %q has a proxy-url that is not a valid URL (the value is not shown: it may hold credentials)", name)
	}
	switch u.Scheme {
	case "http", "https", "socks5":
		return nil
	default:
		return invalid("cluster %q has a proxy-url that is not an http, https or socks5 URL (the value is not shown: it may hold credentials)", name)
	}
}

// redactedValue replaces a kubeconfig value in an error from client-go.
const redactedValue = "<redacted>"

// withoutCredentials returns msg, an error of client-go about the kubeconfig, without the values
// of its current context's cluster and user that may hold credentials (URLs, tokens, basic-auth
// passwords), as they are and as Go quotes them.
func withoutCredentials(msg string, cfg *clientcmdapi.Config, ctx *clientcmdapi.Context) string {
	var values []string
	if c := cfg.Clusters[ctx.Cluster]; c != nil {
		for _, raw := range []string{c.Server, c.ProxyURL} {
			values = append(values, raw)
			if u, err := url.Parse(raw); err == nil && u.User != nil {
				p, _ := u.User.Password()
				values = append(values, u.User.String(), p)
			}
		}
	}
	if u := cfg.AuthInfos[ctx.AuthInfo]; u != nil {
		values = append(values, u.Token, u.Password)
	}
	// Longest first, so that a value is replaced before a shorter one inside it.
	slices.SortFunc(values, func(a, b string) int { return len(b) - len(a) })
	for _, v := range values {
		if v == "" {
			continue
		}
		msg = strings.ReplaceAll(msg, strconv.Quote(v), redactedValue)
		msg = strings.ReplaceAll(msg, v, redactedValue)
	}
	return msg
}

func (p KubeconfigPolicy) checkSelfContained(ns string, cfg *clientcmdapi.Config, ctx *clientcmdapi.Context) error {
	invalid := func(format string, args ...any) error {
		return &KubeconfigError{Kind: ErrInvalidKubeconfig, Detail: fmt.Sprintf(format, args...)}
	}
	cluster, ok := cfg.Clusters[ctx.Cluster]
	if !ok {
		return invalid("context %q names cluster %q, which the kubeconfig does not define", cfg.CurrentContext, ctx.Cluster)
	}
	if cluster.Server == "" {
		return invalid("cluster %q has no server", ctx.Cluster)
	}
	if cluster.CertificateAuthority != "" {
		return invalid("cluster %q refers to a certificate-authority file; embed it as certificate-authority-data (kubectl config view --flatten --minify)", ctx.Cluster)
	}
	if err := checkURLs(ctx.Cluster, cluster); err != nil {
		return err
	}
	if cluster.InsecureSkipTLSVerify && p.ForbidInsecureSkipTLSVerify {
		return invalid("cluster %q sets insecure-skip-tls-verify, which the operator forbids (--forbid-insecure-skip-tls-verify); give its certificate-authority-data instead", ctx.Cluster)
	}
	user, ok := cfg.AuthInfos[ctx.AuthInfo]
	if !ok {
		if ctx.AuthInfo == "" {
			return nil
		}
		return invalid("context %q names user %q, which the kubeconfig does not define", cfg.CurrentContext, ctx.AuthInfo)
	}
	switch {
	case user.ClientCertificate != "" || user.ClientKey != "" || user.TokenFile != "":
		return invalid("user %q refers to files on disk; embed client-certificate-data, client-key-data or token (kubectl config view --flatten --minify)", ctx.AuthInfo)
	case user.Exec != nil:
		return p.checkExec(ns, user.Exec, ctx.AuthInfo)
	case user.AuthProvider != nil:
		return invalid("user %q uses an auth-provider plugin, which Holdfast does not run; use a token or client certificate", ctx.AuthInfo)
	}
	return nil
}

// checkExec allows an exec credential plugin the policy names, run without interaction, for a
// Cluster of a namespace that may use the controller's credentials.
func (p KubeconfigPolicy) checkExec(ns string, exec *clientcmdapi.ExecConfig, user string) error {
	invalid := func(format string, args ...any) error {
		return &KubeconfigError{Kind: ErrInvalidKubeconfig, Detail: fmt.Sprintf(format, args...)}
	}
	if !slices.Contains(p.AllowedExecPlugins, exec.Command) || strings.ContainsAny(exec.Command, `/\`) {
		return invalid("user %q uses the exec credential plugin %q, which this controller does not run: use a token or "+
			"client certificate, or ask the operator to allow the plugin (holdfast controller --allowed-exec-plugins)", user, path.Base(exec.Command))
	}
	if p.AmbientCredentials == nil || !p.AmbientCredentials(ns) {
		return invalid("user %q uses the exec credential plugin %q, which runs as the controller's own identity and so serves only "+
			"Clusters of platform namespaces, not of namespace %q: use a token or client certificate of the cluster, or ask the "+
			"operator to allow the namespace (holdfast controller --exec-plugin-namespaces)", user, exec.Command, ns)
	}
	if len(exec.Env) > 0 {
		return invalid("user %q sets environment variables for its exec credential plugin %q, which Holdfast does not pass on: "+
			"the operator sets what the plugin needs on the controller", user, exec.Command)
	}
	exec.InteractiveMode = clientcmdapi.NeverExecInteractiveMode
	return nil
}

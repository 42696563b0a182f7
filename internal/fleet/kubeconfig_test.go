package fleet

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const secretValue = "t0ken-that-must-never-leak"

func kubeconfig(t *testing.T, mutate func(*clientcmdapi.Config)) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthorityData: []byte("ca")}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: secretValue}
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "ctx"
	if mutate != nil {
		mutate(cfg)
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRESTConfigFromKubeconfig(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		wantKind error
		wantIn   string
	}{
		{name: "valid", data: kubeconfig(t, nil)},
		{name: "empty", data: nil, wantKind: ErrInvalidKubeconfig, wantIn: "empty"},
		{name: "not yaml", data: []byte("{{{" + secretValue), wantKind: ErrInvalidKubeconfig, wantIn: "could not be parsed"},
		{name: "yaml of another shape", data: []byte("clusters: " + secretValue), wantKind: ErrInvalidKubeconfig, wantIn: "could not be parsed"},
		{name: "no current context", data: kubeconfig(t, func(c *clientcmdapi.Config) { c.CurrentContext = "" }), wantKind: ErrNoCurrentContext},
		{name: "current context missing", data: kubeconfig(t, func(c *clientcmdapi.Config) { c.CurrentContext = "nope" }),
			wantKind: ErrInvalidKubeconfig, wantIn: `"nope" names no context`},
		{name: "cluster missing", data: kubeconfig(t, func(c *clientcmdapi.Config) { delete(c.Clusters, "c") }),
			wantKind: ErrInvalidKubeconfig, wantIn: `cluster "c"`},
		{name: "no server", data: kubeconfig(t, func(c *clientcmdapi.Config) { c.Clusters["c"].Server = "" }),
			wantKind: ErrInvalidKubeconfig, wantIn: "has no server"},
		{name: "CA file", data: kubeconfig(t, func(c *clientcmdapi.Config) {
			c.Clusters["c"].CertificateAuthorityData, c.Clusters["c"].CertificateAuthority = nil, "/etc/ca.crt"
		}), wantKind: ErrInvalidKubeconfig, wantIn: "certificate-authority file"},
		{name: "token file", data: kubeconfig(t, func(c *clientcmdapi.Config) { c.AuthInfos["u"].TokenFile = "/var/run/token" }),
			wantKind: ErrInvalidKubeconfig, wantIn: "refers to files"},
		{name: "exec plugin", data: kubeconfig(t, func(c *clientcmdapi.Config) {
			c.AuthInfos["u"].Exec = &clientcmdapi.ExecConfig{Command: "aws", APIVersion: "client.authentication.k8s.io/v1"}
		}), wantKind: ErrInvalidKubeconfig, wantIn: "exec credential plugin"},
		{name: "auth provider", data: kubeconfig(t, func(c *clientcmdapi.Config) {
			c.AuthInfos["u"].AuthProvider = &clientcmdapi.AuthProviderConfig{Name: "oidc"}
		}), wantKind: ErrInvalidKubeconfig, wantIn: "auth-provider"},
		{name: "user missing", data: kubeconfig(t, func(c *clientcmdapi.Config) { delete(c.AuthInfos, "u") }),
			wantKind: ErrInvalidKubeconfig, wantIn: `user "u"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := RESTConfigFromKubeconfig(tt.data)
			if tt.wantKind == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if cfg.Host != "https://127.0.0.1:6443" || cfg.BearerToken != secretValue {
					t.Errorf("config not taken from the current context: host %q", cfg.Host)
				}
				return
			}
			if !errors.Is(err, tt.wantKind) {
				t.Fatalf("error %v, want kind %v", err, tt.wantKind)
			}
			if !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("error %q does not say %q", err, tt.wantIn)
			}
			if strings.Contains(err.Error(), secretValue) {
				t.Errorf("error quotes the kubeconfig's secret: %q", err)
			}
		})
	}
}

func TestExecPluginPolicy(t *testing.T) {
	withExec := func(command string, env ...clientcmdapi.ExecEnvVar) []byte {
		return kubeconfig(t, func(c *clientcmdapi.Config) {
			c.AuthInfos["u"].Token = ""
			c.AuthInfos["u"].Exec = &clientcmdapi.ExecConfig{Command: command, APIVersion: "client.authentication.k8s.io/v1",
				Args: []string{"token", "--cluster", "prod"}, Env: env, InteractiveMode: clientcmdapi.AlwaysExecInteractiveMode}
		})
	}
	platform := func(ns string) bool { return ns == "fleet" }
	policy := KubeconfigPolicy{AllowedExecPlugins: []string{"gke-gcloud-auth-plugin", "kubelogin"}, AmbientCredentials: platform}
	tests := []struct {
		name   string
		policy KubeconfigPolicy
		ns     string // the Cluster's; "fleet" when empty
		data   []byte
		wantIn string // "" means accepted
	}{
		{name: "allowed by name", policy: policy, data: withExec("kubelogin")},
		{name: "not allowed", policy: policy, data: withExec("aws"), wantIn: `plugin "aws", which this controller does not run`},
		{name: "none allowed", data: withExec("kubelogin"), wantIn: "--allowed-exec-plugins"},
		{name: "a path to an allowed name", policy: KubeconfigPolicy{AllowedExecPlugins: []string{"/tmp/kubelogin", "kubelogin"}, AmbientCredentials: platform},
			data: withExec("/tmp/kubelogin"), wantIn: "does not run"},
		{name: "relative path", policy: policy, data: withExec("./kubelogin"), wantIn: "does not run"},
		{name: "its own environment", policy: policy, data: withExec("kubelogin", clientcmdapi.ExecEnvVar{Name: "TOKEN", Value: secretValue}),
			wantIn: "environment variables"},
		{name: "a namespace that may not use the controller's identity", policy: policy, ns: "team-a", data: withExec("kubelogin"),
			wantIn: `serves only Clusters of platform namespaces, not of namespace "team-a": use a token or client certificate of the cluster, or ask the operator to allow the namespace (holdfast controller --exec-plugin-namespaces)`},
		{name: "no namespace may", policy: KubeconfigPolicy{AllowedExecPlugins: []string{"kubelogin"}}, data: withExec("kubelogin"),
			wantIn: "--exec-plugin-namespaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := tt.ns
			if ns == "" {
				ns = "fleet"
			}
			cfg, err := tt.policy.RESTConfig(ns, tt.data)
			if tt.wantIn == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.ExecProvider == nil || cfg.ExecProvider.Command != "kubelogin" || cfg.ExecProvider.InteractiveMode != clientcmdapi.NeverExecInteractiveMode {
					t.Errorf("exec provider %+v, want kubelogin, never interactive", cfg.ExecProvider)
				}
				return
			}
			if !errors.Is(err, ErrInvalidKubeconfig) || !strings.Contains(err.Error(), tt.wantIn) {
				t.Fatalf("error %v, want an invalid kubeconfig mentioning %q", err, tt.wantIn)
			}
			if strings.Contains(err.Error(), secretValue) {
				t.Errorf("error quotes a secret: %v", err)
			}
		})
	}
}

// A URL in a kubeconfig may carry credentials (http://user:password@proxy): a refusal names the
// field and the cluster entry, never the URL.
func TestKubeconfigURLsAreNotQuoted(t *testing.T) {
	const marker = "s3cr3t-marker"
	tests := []struct {
		name   string
		mutate func(*clientcmdapi.Cluster)
		wantIn []string // "" means accepted
	}{
		{name: "proxy-url with a bad port", mutate: func(c *clientcmdapi.Cluster) { c.ProxyURL = "http://user:" + marker + "@proxy:badport" },
			wantIn: []string{"proxy-url", `cluster "c"`}},
		{name: "proxy-url of another scheme", mutate: func(c *clientcmdapi.Cluster) { c.ProxyURL = "ftp://user:" + marker + "@proxy:3128" },
			wantIn: []string{"proxy-url", `cluster "c"`, "http, https or socks5"}},
		{name: "proxy-url with an unclosed IPv6 host", mutate: func(c *clientcmdapi.Cluster) { c.ProxyURL = "http://user:" + marker + "@[::1:3128" },
			wantIn: []string{"proxy-url", `cluster "c"`}},
		{name: "server that is no URL", mutate: func(c *clientcmdapi.Cluster) { c.Server = "https://user:" + marker + "@host:badport" },
			wantIn: []string{"server", `cluster "c"`}},
		{name: "a proxy-url with credentials is accepted", mutate: func(c *clientcmdapi.Cluster) { c.ProxyURL = "http://user:" + marker + "@proxy:3128" }},
		{name: "a server given as host:port is accepted", mutate: func(c *clientcmdapi.Cluster) { c.Server = "127.0.0.1:6443" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RESTConfigFromKubeconfig(kubeconfig(t, func(c *clientcmdapi.Config) { tt.mutate(c.Clusters["c"]) }))
			if len(tt.wantIn) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidKubeconfig) {
				t.Fatalf("error %v, want an invalid kubeconfig", err)
			}
			if strings.Contains(err.Error(), marker) {
				t.Errorf("error quotes the URL's credentials: %q", err)
			}
			for _, w := range tt.wantIn {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// What client-go says about a kubeconfig reaches status without the URLs and credentials of the
// cluster and user in use, however it quotes them.
func TestWithoutCredentials(t *testing.T) {
	const marker = "s3cr3t-marker"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://admin:" + marker + "-server@api:6443", ProxyURL: "http://user:" + marker + "@proxy:3128"}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: marker + "-token", Password: marker + "-password"}
	ctx := &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	for _, msg := range []string{
		`invalid 'proxy-url' "http://user:` + marker + `@proxy:3128" for cluster "c": could not parse: http://user:` + marker + `@proxy:3128`,
		`Get "https://admin:` + marker + `-server@api:6443/version": refused`,
		"the password is " + marker + " or " + marker + "-password, the token " + marker + "-token",
	} {
		got := withoutCredentials(msg, cfg, ctx)
		if strings.Contains(got, marker) {
			t.Errorf("withoutCredentials(%q) = %q, which keeps a credential", msg, got)
		}
		if !strings.Contains(got, redactedValue) {
			t.Errorf("withoutCredentials(%q) = %q, which does not say what it removed", msg, got)
		}
	}
	if msg := `no server found for cluster "c"`; withoutCredentials(msg, cfg, ctx) != msg {
		t.Errorf("withoutCredentials changed a message without credentials: %q", withoutCredentials(msg, cfg, ctx))
	}
}

// TestForbidInsecureSkipTLSVerify: with the operator's switch on, a kubeconfig that turns off
// certificate checks is refused, naming the cluster entry and the flag; without it, it is used.
func TestForbidInsecureSkipTLSVerify(t *testing.T) {
	insecure := kubeconfig(t, func(c *clientcmdapi.Config) {
		c.Clusters["c"].CertificateAuthorityData, c.Clusters["c"].InsecureSkipTLSVerify = nil, true
	})
	if _, err := (KubeconfigPolicy{}).RESTConfig("fleet", insecure); err != nil {
		t.Fatalf("without the switch: %v", err)
	}
	_, err := KubeconfigPolicy{ForbidInsecureSkipTLSVerify: true}.RESTConfig("fleet", insecure)
	if !errors.Is(err, ErrInvalidKubeconfig) || !strings.Contains(err.Error(), `cluster "c" sets insecure-skip-tls-verify`) ||
		!strings.Contains(err.Error(), "--forbid-insecure-skip-tls-verify") {
		t.Fatalf("with the switch: %v, want a refusal naming the cluster and the flag", err)
	}
	if _, err := (KubeconfigPolicy{ForbidInsecureSkipTLSVerify: true}).RESTConfig("fleet", kubeconfig(t, nil)); err != nil {
		t.Fatalf("a kubeconfig that checks certificates, with the switch: %v", err)
	}
}

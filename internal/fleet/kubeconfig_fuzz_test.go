package fleet

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// FuzzKubeconfig validates arbitrary kubeconfig text, as a Cluster's author supplies it, and
// checks what holds whatever the input: no panic; a refusal is a *KubeconfigError; an accepted
// kubeconfig names a server and runs no exec plugin (none is allowed); and no error quotes a
// credential or a URL's user information from the input.
func FuzzKubeconfig(f *testing.F) {
	for _, s := range []string{
		kubeconfigText("https://10.0.0.1:6443", "", "token: tok-s3cr3t-value"),
		kubeconfigText("https://api.example.com", "http://user:pr0xy-s3cr3t@proxy:3128", "token: tok-s3cr3t-value"),
		kubeconfigText("https://api.example.com", "http://user:pr0xy-s3cr3t@proxy:badport", "username: u\n    password: pa55-s3cr3t"),
		kubeconfigText("https://u:srv-s3cr3t@api.example.com:bad", "", "token: tok-s3cr3t-value"),
		kubeconfigText("https://api.example.com", "", "exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, id]}"),
		kubeconfigText("https://api.example.com", "", "tokenFile: /etc/shadow"),
		"{}",
		"current-context: x\ncontexts: []\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cfg, err := RESTConfigFromKubeconfig([]byte(text))
		if err != nil {
			var ke *KubeconfigError
			if !errors.As(err, &ke) {
				t.Fatalf("not a KubeconfigError: %T %v", err, err)
			}
			for _, secret := range credentialsIn(text) {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("the error quotes %q: %v", secret, err)
				}
			}
			return
		}
		if cfg.Host == "" {
			t.Fatal("an accepted kubeconfig names no server")
		}
		if cfg.ExecProvider != nil || cfg.AuthProvider != nil {
			t.Fatal("an accepted kubeconfig runs a plugin no policy allows")
		}
	})
}

func kubeconfigText(server, proxy, user string) string {
	cluster := "server: " + server
	if proxy != "" {
		cluster += "\n    proxy-url: " + proxy
	}
	return "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    " + cluster +
		"\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nusers:\n- name: u\n  user:\n    " + user + "\n"
}

// credentialsIn returns the credentials the kubeconfig text holds, as clientcmd reads them:
// tokens, passwords, client keys and the passwords in server and proxy URLs; left out are values
// too short to search for and those that are also names, which errors may quote.
func credentialsIn(text string) []string {
	cfg, err := clientcmd.Load([]byte(text))
	if err != nil {
		return nil
	}
	names := map[string]bool{cfg.CurrentContext: true}
	for n := range cfg.Clusters {
		names[n] = true
	}
	for n := range cfg.Contexts {
		names[n] = true
	}
	for n := range cfg.AuthInfos {
		names[n] = true
	}
	var out []string
	add := func(v string) {
		if len(v) < 6 {
			return
		}
		for n := range names {
			if strings.Contains(n, v) {
				return
			}
		}
		out = append(out, v)
	}
	for _, u := range cfg.AuthInfos {
		add(u.Token)
		add(u.Password)
		add(string(u.ClientKeyData))
	}
	for _, c := range cfg.Clusters {
		for _, raw := range []string{c.Server, c.ProxyURL} {
			if i := strings.LastIndex(raw, "@"); i > 0 {
				if j := strings.Index(raw, "://"); j >= 0 && j+3 < i {
					if _, pw, ok := strings.Cut(raw[j+3:i], ":"); ok {
						add(pw)
					}
				}
			}
		}
	}
	return out
}

// FuzzExecPluginNamespaces validates arbitrary kubeconfig text from a Cluster of an arbitrary
// namespace under a policy that allows one plugin, and only to namespace "platform" (issue 27,
// finding 1): whatever the input, a kubeconfig that runs a plugin is accepted only for that
// namespace and only for exactly that command, never interactively.
func FuzzExecPluginNamespaces(f *testing.F) {
	const plugin = "aws-iam-authenticator"
	execUser := "exec: {apiVersion: client.authentication.k8s.io/v1, command: " + plugin + ", args: [token, -i, prod]}"
	for _, seed := range []struct{ ns, text string }{
		{"platform", kubeconfigText("https://10.0.0.1:6443", "", execUser)},
		{"team-a", kubeconfigText("https://10.0.0.1:6443", "", execUser)},
		{"", kubeconfigText("https://10.0.0.1:6443", "", execUser)},
		{"platform", kubeconfigText("https://10.0.0.1:6443", "", "exec: {apiVersion: client.authentication.k8s.io/v1, command: ./"+plugin+"}")},
		{"platform", kubeconfigText("https://10.0.0.1:6443", "", "exec: {apiVersion: client.authentication.k8s.io/v1, command: "+plugin+", env: [{name: AWS_PROFILE, value: x}]}")},
		{"platform", kubeconfigText("https://10.0.0.1:6443", "", "token: tok-s3cr3t-value")},
	} {
		f.Add(seed.ns, seed.text)
	}
	policy := KubeconfigPolicy{AllowedExecPlugins: []string{plugin}, AmbientCredentials: func(ns string) bool { return ns == "platform" }}
	f.Fuzz(func(t *testing.T, ns, text string) {
		cfg, err := policy.RESTConfig(ns, []byte(text))
		if err != nil {
			var ke *KubeconfigError
			if !errors.As(err, &ke) {
				t.Fatalf("not a KubeconfigError: %T %v", err, err)
			}
			return
		}
		if cfg.AuthProvider != nil {
			t.Fatal("an accepted kubeconfig runs an auth-provider plugin")
		}
		if cfg.ExecProvider == nil {
			return
		}
		if ns != "platform" {
			t.Fatalf("a Cluster of namespace %q may run the plugin", ns)
		}
		if cfg.ExecProvider.Command != plugin || len(cfg.ExecProvider.Env) > 0 {
			t.Fatalf("the plugin runs as %q with %d environment variables", cfg.ExecProvider.Command, len(cfg.ExecProvider.Env))
		}
		if cfg.ExecProvider.InteractiveMode != clientcmdapi.NeverExecInteractiveMode {
			t.Fatalf("the plugin may ask for input: %q", cfg.ExecProvider.InteractiveMode)
		}
	})
}

package fleet_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/testsupport"
)

// TestExecPluginReachesACluster: a kubeconfig whose user is an exec credential plugin reaches a
// real API server when the operator allowed the plugin by name, and is refused, naming the flag
// to set, when not — the usual EKS, GKE and AKS setup.
func TestExecPluginReachesACluster(t *testing.T) {
	testsupport.RequireBinaries(t)
	ctx := context.Background()
	cp, err := sandbox.Start(ctx, sandbox.Options{Name: "exec"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })

	// The plugin, on PATH as the operator installs it, answers with the admin's certificate.
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "holdfast-test-auth"), "./testdata/execplugin")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	admin, err := clientcmd.Load(cp.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	user := admin.AuthInfos[admin.Contexts[admin.CurrentContext].AuthInfo]
	creds := t.TempDir()
	certFile, keyFile := filepath.Join(creds, "cert"), filepath.Join(creds, "key")
	if err := os.WriteFile(certFile, user.ClientCertificateData, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, user.ClientKeyData, 0o600); err != nil {
		t.Fatal(err)
	}
	user.ClientCertificateData, user.ClientKeyData = nil, nil
	user.Exec = &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "holdfast-test-auth",
		Args: []string{certFile, keyFile}, InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode}
	kubeconfig, err := clientcmd.Write(*admin)
	if err != nil {
		t.Fatal(err)
	}

	_, err = fleet.KubeconfigPolicy{}.RESTConfig(kubeconfig)
	if !errors.Is(err, fleet.ErrInvalidKubeconfig) || !strings.Contains(err.Error(), "--allowed-exec-plugins") {
		t.Fatalf("plugin not allowed: got %v, want an invalid kubeconfig naming --allowed-exec-plugins", err)
	}
	cfg, err := fleet.KubeconfigPolicy{AllowedExecPlugins: []string{"holdfast-test-auth"}}.RESTConfig(kubeconfig)
	if err != nil {
		t.Fatalf("plugin allowed: %v", err)
	}
	if cfg.ExecProvider == nil || cfg.ExecProvider.InteractiveMode != clientcmdapi.NeverExecInteractiveMode {
		t.Fatalf("exec provider %+v, want the plugin, never interactive", cfg.ExecProvider)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("reaching the API server through the plugin: %v", err)
	}
	if v.GitVersion == "" {
		t.Error("no server version")
	}
}

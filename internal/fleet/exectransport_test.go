package fleet

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ExecPlugin is the name the tests install the stand-in exec credential plugin
// (testdata/execplugin) by.
const ExecPlugin = "holdfast-test-auth"

// InstallExecPlugin builds the stand-in plugin onto PATH, as the operator installs a cloud
// provider's plugin on the controller's (exported for the package's external tests).
func InstallExecPlugin(t *testing.T) {
	t.Helper()
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, ExecPlugin), "./testdata/execplugin")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// whoAmIServer is an API server stand-in over TLS and HTTP/2 that answers /version, and a
// SelfSubjectReview with the credentials it was shown: "cert:<common name>" for a client
// certificate, "token:<token>" for a bearer token, followed by " as:<user>" when impersonated.
func whoAmIServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if req.URL.Path == "/version" {
			_, _ = w.Write([]byte(`{"gitVersion":"v1.36.0"}`))
			return
		}
		var who []string
		if req.TLS != nil && len(req.TLS.PeerCertificates) > 0 {
			who = append(who, "cert:"+req.TLS.PeerCertificates[0].Subject.CommonName)
		}
		if token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
			who = append(who, "token:"+token)
		}
		if as := req.Header.Get("Impersonate-User"); as != "" {
			who = append(who, "as:"+as)
		}
		review := authenticationv1.SelfSubjectReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "SelfSubjectReview"},
			Status: authenticationv1.SelfSubjectReviewStatus{UserInfo: authenticationv1.UserInfo{Username: strings.Join(who, " ")}}}
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(review)
	}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// clientCertificate writes a self-signed client certificate for cn and its key into dir.
func clientCertificate(t *testing.T, dir, cn string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert"), filepath.Join(dir, "key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestConnectionPresentsExecCredentials: a connection built from a kubeconfig whose exec
// credential plugin answers with a client certificate, or with a token, presents it to the
// cluster on the connection's own transport — to the probe, and to a client impersonating a
// ServiceAccount as ClientAs builds one — instead of failing to be built at all (client-go
// refuses a custom transport beside the plugin's certificate callback).
func TestConnectionPresentsExecCredentials(t *testing.T) {
	InstallExecPlugin(t)
	srv := whoAmIServer(t)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	dir := t.TempDir()
	certFile, keyFile := clientCertificate(t, dir, "exec-cert-user")
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("exec-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "client certificate", args: []string{certFile, keyFile}, want: "cert:exec-cert-user"},
		{name: "token", args: []string{"-token", tokenFile}, want: "token:exec-token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry(Options{Kubeconfigs: KubeconfigPolicy{AllowedExecPlugins: []string{ExecPlugin},
				AmbientCredentials: func(ns string) bool { return ns == "fleet" }}})
			t.Cleanup(r.Close)
			conn, err := r.Connect(types.NamespacedName{Namespace: "fleet", Name: "c"}, "", kubeconfig(t, func(c *clientcmdapi.Config) {
				c.Clusters["c"].Server, c.Clusters["c"].CertificateAuthorityData = srv.URL, ca
				c.AuthInfos["u"].Token = ""
				c.AuthInfos["u"].Exec = &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: ExecPlugin, Args: tt.args}
			}))
			if err != nil {
				t.Fatalf("connecting: %v", err)
			}
			res, err := conn.Probe(context.Background())
			if err != nil {
				t.Fatalf("probing: %v", err)
			}
			if res.User != tt.want {
				t.Errorf("the probe was made as %q, want %q", res.User, tt.want)
			}

			cfg := conn.RESTConfig()
			cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:apps:deployer"}
			hc, err := rest.HTTPClientFor(cfg)
			if err != nil {
				t.Fatalf("building an impersonating client: %v", err)
			}
			reviews, err := authenticationv1client.NewForConfigAndClient(cfg, hc)
			if err != nil {
				t.Fatal(err)
			}
			review, err := reviews.SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("impersonating: %v", err)
			}
			if want := tt.want + " as:system:serviceaccount:apps:deployer"; review.Status.UserInfo.Username != want {
				t.Errorf("the impersonating request was made as %q, want %q", review.Status.UserInfo.Username, want)
			}
		})
	}
}

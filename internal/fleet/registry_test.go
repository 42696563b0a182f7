package fleet

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestClosedConnectionsAreReported: whoever keeps state about a connection's cache learns when
// the registry lets the connection go, and only then; whoever waits for a connection learns
// when a new one is registered, and not when one is reused.
func TestClosedConnectionsAreReported(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	config := func(token string) []byte {
		return kubeconfig(t, func(c *clientcmdapi.Config) {
			c.Clusters["c"].Server, c.Clusters["c"].CertificateAuthorityData = srv.URL, ca
			c.AuthInfos["u"].Token = token
		})
	}
	r := NewRegistry(Options{})
	var closed []*Connection
	r.OnClosed(func(c *Connection) {
		select {
		case <-c.done:
		default:
			t.Errorf("connection of %s reported before its cache stopped", c.Key())
		}
		closed = append(closed, c)
	})
	var connected []types.NamespacedName
	r.OnConnected(func(k types.NamespacedName) {
		if r.Get(k) == nil {
			t.Errorf("%s reported connected before Get returns its connection", k)
		}
		connected = append(connected, k)
	})
	connect := func(key types.NamespacedName, token string) *Connection {
		t.Helper()
		c, err := r.Connect(key, token, config(token))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	expect := func(step string, want ...*Connection) {
		t.Helper()
		if len(closed) != len(want) {
			t.Fatalf("%s: %d connections reported closed, want %d", step, len(closed), len(want))
		}
		for i := range want {
			if closed[i] != want[i] {
				t.Fatalf("%s: reported %s's connection %p, want %p", step, closed[i].Key(), closed[i], want[i])
			}
		}
	}

	c1, c2 := types.NamespacedName{Namespace: "fleet", Name: "c1"}, types.NamespacedName{Namespace: "fleet", Name: "c2"}
	first := connect(c1, "a")
	if again := connect(c1, "a"); again != first {
		t.Fatal("the same kubeconfig built a new connection")
	}
	expect("reused")
	second := connect(c1, "b")
	expect("replaced by a changed kubeconfig", first)
	if !r.Remove(c1) {
		t.Fatal("no connection removed")
	}
	expect("removed", first, second)
	r.Remove(c1)
	expect("removed again", first, second)
	other := connect(c2, "a")
	r.Close()
	expect("closed with the registry", first, second, other)
	if want := []types.NamespacedName{c1, c1, c2}; !slices.Equal(connected, want) {
		t.Errorf("reported connected: %v, want %v (the first, the one from a changed kubeconfig, the other cluster's)", connected, want)
	}
}

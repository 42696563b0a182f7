package sandbox

import (
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// TestStartRetriesWhenAPortIsTaken hands etcd and kube-apiserver a port that is already in
// use, as happens when another process grabs a port between freePort and the child's bind.
func TestStartRetriesWhenAPortIsTaken(t *testing.T) {
	requireBinaries(t)
	g := NewWithT(t)

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port

	// Calls 1-2 are etcd's first attempt (client, peer), 3-4 its retry, 5 kube-apiserver's
	// first attempt.
	var mu sync.Mutex
	calls := 0
	pickPort = func() (int, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 || calls == 5 {
			return takenPort, nil
		}
		return freePort()
	}
	t.Cleanup(func() { pickPort = freePort })

	began := time.Now()
	c, err := Start(t.Context(), Options{Name: "contested"})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = c.Stop() })
	t.Logf("Started etcd and kube-apiserver, each after a port conflict, in %s", time.Since(began).Round(time.Millisecond))
	g.Expect(calls).To(Equal(6))
	g.Expect(strings.HasSuffix(c.Host(), ":"+strconv.Itoa(takenPort))).To(BeFalse())
	_, err = newClient(g, c.Kubeconfig()).Discovery().ServerVersion()
	g.Expect(err).NotTo(HaveOccurred())
}

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"time"
)

// startEtcd runs a single-member etcd on two fresh loopback ports, retrying with new ports if
// another process takes one first.
func (c *ControlPlane) startEtcd(ctx context.Context) error {
	client := &http.Client{Timeout: 5 * time.Second}
	return retryOnPortConflict(func() (*process, error) {
		clientPort, err := pickPort()
		if err != nil {
			return nil, err
		}
		peerPort, err := pickPort()
		if err != nil {
			return nil, err
		}
		clientURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
		peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
		args := []string{
			"--name=sandbox",
			"--data-dir=" + filepath.Join(c.dir, "etcd"),
			"--listen-client-urls=" + clientURL,
			"--advertise-client-urls=" + clientURL,
			"--listen-peer-urls=" + peerURL,
			"--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=sandbox=" + peerURL,
			// Durability is worthless for a throwaway cluster, and fsync dominates etcd's
			// latency on CI disks.
			"--unsafe-no-fsync",
			"--log-level=warn",
		}
		p, err := c.launch("etcd", etcdBinary, args)
		if err != nil {
			return nil, err
		}
		c.setProcess(&c.etcd, p)
		if err := waitReady(ctx, c.stopping, p, httpOK(client, clientURL+"/health")); err != nil {
			return p, errors.Join(err, p.stop())
		}
		c.etcdURL = clientURL
		return p, nil
	})
}

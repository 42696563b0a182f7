package fleet

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// health is what the probes learnt about one connection.
type health struct {
	mu            sync.Mutex
	lastConnected time.Time
	// failing: a probe failed since the last success.
	failing bool
	// recovered is the time of the last success after failures.
	recovered time.Time
}

// MarkConnected records a successful probe at t. A success after one or more failed probes is
// a recovery: the link came back, whether or not the Cluster stopped being Connected (a
// partition shorter than the connection grace keeps it Connected). A recovery is recorded
// (Recovered) and reported to the functions given to the registry's OnRecovered: what the
// cluster went through while the link was down, a change no watch delivered, has to be looked
// at again.
func (c *Connection) MarkConnected(t time.Time) {
	c.health.mu.Lock()
	recovered := c.health.failing
	c.health.lastConnected, c.health.failing = t, false
	if recovered {
		c.health.recovered = t
	}
	c.health.mu.Unlock()
	if recovered {
		c.recoveries.notify(c.key)
	}
}

// MarkProbeFailed records a failed probe: the next successful one is a recovery.
func (c *Connection) MarkProbeFailed() {
	c.health.mu.Lock()
	defer c.health.mu.Unlock()
	c.health.failing = true
}

// LastConnected is the time given to the last MarkConnected, or zero.
func (c *Connection) LastConnected() time.Time {
	c.health.mu.Lock()
	defer c.health.mu.Unlock()
	return c.health.lastConnected
}

// Recovered is the time given to the MarkConnected of the last recovery, or zero if the
// connection never recovered.
func (c *Connection) Recovered() time.Time {
	c.health.mu.Lock()
	defer c.health.mu.Unlock()
	return c.health.recovered
}

// OnRecovered registers f to be called with the cluster's key each time a connection recovers
// (see Connection.MarkConnected). f runs on the prober's goroutine: it must not block.
func (r *Registry) OnRecovered(f func(cluster types.NamespacedName)) {
	r.recoveries.add(f)
}

package clusterservicestatus_test

import (
	"context"
	"net"
	"sync"
	"syscall"

	"k8s.io/apimachinery/pkg/types"

	"holdfast.dev/holdfast/internal/fleet"
)

// The suite's partitionable transport cuts requests and responses above HTTP; links cut the
// controller's TCP connections to a target below TLS and HTTP/2, as a network does, so that
// what notices a dead connection (HTTP/2 health checks, timeouts) is the controller's own.
var links sync.Map // cluster name -> *link

// link is the network between the controller and one target cluster.
type link struct {
	mu    sync.Mutex
	down  bool
	conns map[*linkConn]bool
}

func linkTo(cluster string) *link {
	l, _ := links.LoadOrStore(cluster, &link{conns: map[*linkConn]bool{}})
	return l.(*link)
}

// dialThroughLinks is the controller's dial to targets (controller.Options.TargetDial): while a
// link is down, new connections are refused.
func dialThroughLinks(cluster types.NamespacedName, dial fleet.DialFunc) fleet.DialFunc {
	l := linkTo(cluster.Name)
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		l.mu.Lock()
		down := l.down
		l.mu.Unlock()
		if down {
			return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
		}
		c, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		lc := &linkConn{Conn: c, link: l, holed: make(chan struct{}), closed: make(chan struct{})}
		l.mu.Lock()
		l.conns[lc] = true
		l.mu.Unlock()
		return lc, nil
	}
}

// blackHole cuts the link to cluster the way a network that silently drops packets does:
// every open connection hangs — what is written goes nowhere, reads wait and nothing is
// received, no error, no reset — and new connections are refused. It returns how many
// connections it black-holed. Those stay dead after restoreLink, as when a NAT or a load
// balancer in the path lost their state: only their owner closing them ends them.
func blackHole(cluster string) int {
	l := linkTo(cluster)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down = true
	for c := range l.conns {
		c.holeOnce.Do(func() { close(c.holed) })
	}
	return len(l.conns)
}

// restoreLink lets new connections to cluster through again.
func restoreLink(cluster string) {
	l := linkTo(cluster)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down = false
}

// closeHoled closes the black-holed connections to cluster that their owners left open (those
// of a manager that was stopped), so that their goroutines end.
func closeHoled(cluster string) {
	l := linkTo(cluster)
	l.mu.Lock()
	var holed []*linkConn
	for c := range l.conns {
		if c.isHoled() {
			holed = append(holed, c)
		}
	}
	l.mu.Unlock()
	for _, c := range holed {
		_ = c.Close()
	}
}

// linkConn is one TCP connection through a link.
type linkConn struct {
	net.Conn
	link      *link
	holeOnce  sync.Once
	holed     chan struct{}
	closeOnce sync.Once
	closed    chan struct{}
}

func (c *linkConn) isHoled() bool {
	select {
	case <-c.holed:
		return true
	default:
		return false
	}
}

// Read returns nothing once the connection is black-holed, not even what was on its way: it
// waits until the connection is closed.
func (c *linkConn) Read(p []byte) (int, error) {
	if !c.isHoled() {
		n, err := c.Conn.Read(p)
		if !c.isHoled() {
			return n, err
		}
	}
	<-c.closed
	return 0, net.ErrClosed
}

// Write drops what is written to a black-holed connection, as the network would.
func (c *linkConn) Write(p []byte) (int, error) {
	if c.isHoled() {
		select {
		case <-c.closed:
			return 0, net.ErrClosed
		default:
			return len(p), nil
		}
	}
	return c.Conn.Write(p)
}

func (c *linkConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.link.mu.Lock()
		delete(c.link.conns, c)
		c.link.mu.Unlock()
	})
	return c.Conn.Close()
}

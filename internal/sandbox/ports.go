package sandbox

import (
	"fmt"
	"net"
	"syscall"
	"time"
)

// startAttempts bounds retries of a start that lost its port to another process between
// freePort closing it and the child binding it.
const startAttempts = 3

// pickPort chooses the ports of the processes; a variable so that a test can hand out a taken
// port to exercise the retry.
var pickPort = freePort

// freePort asks the kernel for an unused loopback port. The port is free only until someone
// else takes it, hence startAttempts.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portConflict reports whether a process died because its port was taken.
func portConflict(p *process) bool {
	return p.tail.contains("address already in use")
}

// portReservation holds the API server's port while the API server is stopped, so that
// StartAPIServer can come back on the same address that kubeconfigs already point at.
//
// It is a socket that is bound but not listening: connections are refused exactly as with a
// stopped server (a listener that resets connections instead makes client-go retry GETs for
// ten seconds), and the kernel does not hand the port out to bind(0) or outgoing connections.
// SO_REUSEADDR lets the bind succeed while the old server's connections sit in TIME_WAIT, and
// lets kube-apiserver, which sets it too, bind the port while the reservation is still held,
// so there is no moment at which the port is free for others.
type portReservation struct {
	fd int
}

func reservePort(port int) (*portReservation, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("reserving port %d: socket: %w", port, err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("reserving port %d: SO_REUSEADDR: %w", port, err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("reserving port %d: bind: %w", port, err)
	}
	return &portReservation{fd: fd}, nil
}

func (r *portReservation) release() {
	if r != nil {
		_ = syscall.Close(r.fd)
	}
}

// retryOnPortConflict runs try, which starts a process and waits for it, again while the
// process died because its port was taken. try returns the process it started, if any, so
// that the cause can be read from its output; a process that failed is stopped by try.
func retryOnPortConflict(try func() (*process, error)) error {
	var err error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		var p *process
		if p, err = try(); err == nil {
			return nil
		}
		if p == nil || !p.exited() || !portConflict(p) {
			return err
		}
		// Give whoever holds the port a moment; a retry on the same port needs it.
		time.Sleep(time.Duration(attempt) * 250 * time.Millisecond)
	}
	return fmt.Errorf("port taken by another process %d times in a row: %w", startAttempts, err)
}

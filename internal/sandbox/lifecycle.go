package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// errStopped is returned by lifecycle calls after Stop.
var errStopped = errors.New("control plane is stopped")

// StopAPIServer stops kube-apiserver, and kube-controller-manager, kube-scheduler and kwok with
// it, to simulate an unreachable cluster. etcd and its data stay; the port stays held so that StartAPIServer
// comes back at the same Host. Meanwhile connections are refused, as by a stopped server.
func (c *ControlPlane) StopAPIServer() error {
	c.lifecycle.Lock()
	defer c.lifecycle.Unlock()
	if c.stopped {
		return fmt.Errorf("stopping kube-apiserver of %q: %w", c.name, errStopped)
	}
	if err := c.stopAPIServerLocked(); err != nil {
		return fmt.Errorf("stopping kube-apiserver of %q: %w", c.name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reservation != nil {
		return nil
	}
	reservation, err := reservePort(c.apiPort)
	if err != nil {
		return fmt.Errorf("stopping kube-apiserver of %q: %w", c.name, err)
	}
	c.reservation = reservation
	return nil
}

func (c *ControlPlane) stopAPIServerLocked() error {
	c.mu.Lock()
	kwok, scheduler, kcm, apiServer := c.kwok, c.scheduler, c.controllerManager, c.apiServer
	c.mu.Unlock()
	var errs []error
	// The API server's clients first: they would otherwise log connection errors until they
	// are stopped.
	for _, p := range []*process{kwok, scheduler, kcm, apiServer} {
		if p != nil {
			errs = append(errs, p.stop())
		}
	}
	return errors.Join(errs...)
}

// StartAPIServer restarts what StopAPIServer stopped, on the same port, and waits until it
// is ready. It does nothing if they are running.
func (c *ControlPlane) StartAPIServer(ctx context.Context) error {
	c.lifecycle.Lock()
	defer c.lifecycle.Unlock()
	if c.stopped {
		return fmt.Errorf("starting kube-apiserver of %q: %w", c.name, errStopped)
	}
	c.mu.Lock()
	apiServerRunning := c.apiServer != nil && !c.apiServer.exited()
	kcmRunning := c.controllerManager != nil && !c.controllerManager.exited()
	schedulerRunning := c.scheduler != nil && !c.scheduler.exited()
	kwokRunning := c.kwok != nil && !c.kwok.exited()
	reservation := c.reservation
	c.reservation = nil
	c.mu.Unlock()
	if !apiServerRunning {
		// Released only once kube-apiserver is listening (see portReservation).
		err := c.startAPIServer(ctx, c.apiPort)
		reservation.release()
		if err != nil {
			// Hold the port again so that a later StartAPIServer can still use it.
			if again, reserveErr := reservePort(c.apiPort); reserveErr == nil {
				c.mu.Lock()
				c.reservation = again
				c.mu.Unlock()
			}
			return fmt.Errorf("starting kube-apiserver of %q: %w", c.name, err)
		}
	}
	// Also covers an earlier StartAPIServer whose kube-controller-manager failed to start.
	if c.withKCM && !kcmRunning {
		if err := c.startControllerManager(ctx); err != nil {
			return fmt.Errorf("starting kube-controller-manager of %q: %w", c.name, err)
		}
	}
	if c.nodes > 0 && !schedulerRunning {
		if err := c.startScheduler(ctx); err != nil {
			return fmt.Errorf("starting kube-scheduler of %q: %w", c.name, err)
		}
	}
	if c.nodes > 0 && !kwokRunning {
		if err := c.startKwok(ctx); err != nil {
			return fmt.Errorf("starting kwok of %q: %w", c.name, err)
		}
	}
	return nil
}

// Stop stops every process (SIGTERM, then SIGKILL after 10s) and removes the working directory
// if Start created it. It is idempotent and may be called concurrently, e.g. from a signal
// handler while a test's cleanup also calls it; a StartAPIServer in progress is cut short.
func (c *ControlPlane) Stop() error {
	c.closeOnce.Do(func() { close(c.stopping) })
	c.lifecycle.Lock()
	defer c.lifecycle.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	errs := []error{c.stopAPIServerLocked()}
	c.mu.Lock()
	etcd := c.etcd
	c.reservation.release()
	c.reservation = nil
	c.mu.Unlock()
	if etcd != nil {
		errs = append(errs, etcd.stop())
	}
	if c.removeDir {
		if err := os.RemoveAll(c.dir); err != nil {
			errs = append(errs, fmt.Errorf("removing working directory: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stopping control plane %q: %w", c.name, err)
	}
	return nil
}

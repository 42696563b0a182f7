package cluster_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/testsupport"
)

// The suite runs one hub and one target control plane and a manager running the Cluster
// controller with short intervals, shared by every test in the package.
const (
	probeInterval = 250 * time.Millisecond
	// connectionGrace leaves room to see the "within grace" state even when stopping the
	// target's API server (graceful, seconds on a loaded machine) eats into it: probes start
	// failing as the shutdown begins, before StopAPIServer returns.
	connectionGrace = 8 * time.Second
)

var (
	hub, target *sandbox.ControlPlane
	hubClient   client.Client
	registry    *fleet.Registry
	logs        = &testsupport.LogBuffer{}
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	if run, code := testsupport.BinariesForMain(); !run {
		return code
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	planes, err := sandbox.StartMany(ctx, []sandbox.Options{{Name: "hub"}, {Name: "target"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	hub, target = planes[0], planes[1]
	defer func() {
		_ = target.Stop()
		_ = hub.Stop()
	}()
	if err := localfleet.InstallCRDs(ctx, hub); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	// Every log line goes to a buffer that the redaction tests search for secret material.
	var out io.Writer = logs
	if testing.Verbose() {
		out = io.MultiWriter(logs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(out), zap.UseDevMode(true)))

	mgr, reg, err := controller.NewManager(ctx, hub.RESTConfig(), controller.Options{
		MetricsAddr: "0", HealthAddr: "0",
		ProbeInterval: probeInterval, ConnectionGrace: connectionGrace,
		SkipNameValidation: true,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	registry = reg
	// A direct client: reading Secrets through the manager's cache would make it cache them.
	hubClient, err = client.New(hub.RESTConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		fmt.Fprintln(os.Stderr, "hub cache did not sync")
		return 1
	}
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	return code
}

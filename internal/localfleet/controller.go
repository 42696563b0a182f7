package localfleet

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller"
)

// StartController runs the Holdfast manager against the fleet's hub in the background, with
// metrics and health probes on ports of their own choosing unless opts says otherwise; the
// returned function stops it and waits for it to end.
func (f *Fleet) StartController(ctx context.Context, opts controller.Options) (func() error, error) {
	if opts.MetricsAddr == "" {
		opts.MetricsAddr = "0"
	}
	if opts.HealthAddr == "" {
		opts.HealthAddr = "0"
	}
	mgr, _, err := controller.NewManager(ctx, f.Hub.RESTConfig(), opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() error {
		cancel()
		if err := <-done; err != nil {
			return fmt.Errorf("running the controller: %w", err)
		}
		return nil
	}, nil
}

// WaitClustersReady waits until every registered Cluster is Ready.
func (f *Fleet) WaitClustersReady(ctx context.Context, timeout time.Duration) error {
	var last []holdfastv1.Cluster
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		clusters, err := f.Clusters(ctx)
		if err != nil {
			return false, nil //nolint:nilerr // the hub may be busy; keep polling until the timeout
		}
		last = clusters
		for i := range clusters {
			if !conditions.IsTrue(&clusters[i], holdfastv1.ReadyCondition) {
				return false, nil
			}
		}
		return len(clusters) == len(f.Targets), nil
	})
	if err != nil {
		var notReady []string
		for i := range last {
			if !conditions.IsTrue(&last[i], holdfastv1.ReadyCondition) {
				notReady = append(notReady, last[i].Name)
			}
		}
		return fmt.Errorf("waiting for Clusters %v to become Ready: %w", notReady, err)
	}
	return nil
}

package main

import (
	"context"
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/measure"
)

// TestSmoke: four drifts, one of each kind, on one cluster.
func TestSmoke(t *testing.T) {
	cfg := config{clusters: 1, drifts: 4, configMaps: 4, secrets: 4, services: 4, deployments: 4,
		gap: 50 * time.Millisecond, correctTimeout: 10 * time.Second, settle: time.Second, quiet: 500 * time.Millisecond,
		timeout: 3 * time.Minute, impersonate: true, prevention: holdfastv1.PreventionOff}
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, cfg) })
}

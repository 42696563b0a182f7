package main

import (
	"context"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// TestSmoke: 10 objects to one cluster, one reconcile with nothing changed.
func TestSmoke(t *testing.T) {
	cfg := config{objects: 10, clusters: 1, reconciles: 1, quiet: 500 * time.Millisecond, timeout: 3 * time.Minute}
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, cfg) })
}

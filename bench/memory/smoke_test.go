package main

import (
	"context"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// TestSmoke: one service set of 10 objects on one cluster, then a flood of 10.
func TestSmoke(t *testing.T) {
	cfg := config{clusters: 1, sets: 1, objects: 10, settle: time.Second, quiet: time.Second, timeout: 3 * time.Minute,
		flood: 10, floodPadding: 1 << 10}
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, cfg) })
}

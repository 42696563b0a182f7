package main

import (
	"context"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// TestSmoke: two simulated clusters, one round.
func TestSmoke(t *testing.T) {
	cfg := config{clusters: 2, servers: 1, objects: 4, concurrency: 2, rounds: 1, diffRuns: 1, timeout: 3 * time.Minute}
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, cfg) })
}

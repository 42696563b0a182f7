package main

import (
	"context"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// TestSmoke: 4 simulated clusters with 4 objects each, two edits at rest and during the
// rollout, and the bystander beside it.
func TestSmoke(t *testing.T) {
	cfg := config{sizes: []int{4}, servers: 1, objects: 4, edits: 2, rolloutEdits: 2, concurrency: 2, seed: 1,
		settle: time.Second, gap: 20 * time.Millisecond, timeout: 3 * time.Minute, correctTimeout: 20 * time.Second,
		memoryLimit: 1 << 30, replicas: 1, editors: 1, bystander: true}
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, cfg) })
}

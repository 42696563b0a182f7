package main

import (
	"context"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// TestSmoke: service sets of 2 and 4 ConfigMaps, two edits each.
func TestSmoke(t *testing.T) {
	cfg := config{sizes: sizeList{2, 4}, edits: 2, seed: 1, gap: 50 * time.Millisecond, quiet: 250 * time.Millisecond,
		settle: time.Second, correctTimeout: 20 * time.Second, timeout: 3 * time.Minute}
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, cfg) })
}

package main

import (
	"context"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// TestSmoke: three edits of each corrector with the hub up, and three during a hub outage of
// three seconds.
func TestSmoke(t *testing.T) {
	o := options{objects: 3, edits: 3, seed: 1, gap: 50 * time.Millisecond, outage: 3 * time.Second}
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, o) })
}

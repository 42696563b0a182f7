package main

import (
	"context"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// TestSmoke: two clusters, probed for two seconds.
func TestSmoke(t *testing.T) {
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, 2, 2*time.Second, 2*time.Minute) })
}

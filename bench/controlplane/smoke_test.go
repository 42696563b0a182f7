package main

import (
	"context"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// TestSmoke: one control plane, started and measured.
func TestSmoke(t *testing.T) {
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, 1, time.Second, false) })
}

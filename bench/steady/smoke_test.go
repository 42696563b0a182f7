package main

import (
	"context"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// TestSmoke: 10 objects on one cluster, watched for two seconds.
func TestSmoke(t *testing.T) {
	cfg := config{clusters: 1, objects: 10, noControllerManager: true, duration: 2 * time.Second, quiet: time.Second, timeout: 3 * time.Minute}
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, cfg) })
}

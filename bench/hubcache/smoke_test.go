package main

import (
	"context"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// TestSmoke: two small ConfigMaps and Secrets, one of them read by the template.
func TestSmoke(t *testing.T) {
	cfg := config{clusters: 1, configMaps: 2, size: 1 << 10, secrets: 2, secretSize: 1 << 10, referenced: 1,
		settle: time.Second, timeout: 3 * time.Minute}
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, cfg) })
}

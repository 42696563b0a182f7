package main

import (
	"context"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/measure"
)

// TestSmoke: 3 simulated clusters with 4 objects each, in Push mode and then in Pull mode (the
// agents in the test's process), a 2-second idle window. Pull mode's pull floor checks what its
// ideal agents left (every status naming the round, every object on its cluster) or fails.
func TestSmoke(t *testing.T) {
	cfg := config{clusters: 3, servers: 1, objects: 4, modes: []string{"push", "pull"}, concurrency: 2,
		idle: 2 * time.Second, settle: time.Second, timeout: 3 * time.Minute, memoryLimit: 1 << 30, agentsInProcess: true}
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, cfg) })
}

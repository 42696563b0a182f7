package main

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"holdfast.dev/holdfast/internal/measure"
)

// TestSmoke: two waves of one simulated cluster each.
func TestSmoke(t *testing.T) {
	cfg := config{waves: []int{1, 1}, servers: 1, objects: 2, concurrency: 2, rounds: 1,
		maxInFlight: intstr.FromString("100%"), maxInFlightFlag: "100%", settle: 500 * time.Millisecond, timeout: 3 * time.Minute}
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, cfg) })
}

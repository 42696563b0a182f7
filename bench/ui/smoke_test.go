package main

import (
	"context"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/testsupport/browser"
)

// TestSmoke: two clusters and one service set, each view measured once.
func TestSmoke(t *testing.T) {
	if _, err := browser.Path(); err != nil {
		t.Skipf("no Chromium: %v", err)
	}
	cfg := config{clusters: 2, sets: 1, rounds: 1, timeout: time.Minute}
	measure.Smoke(t, func(ctx context.Context) error { return run(ctx, cfg) })
}

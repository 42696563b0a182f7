package measure

import (
	"context"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"holdfast.dev/holdfast/internal/testsupport"
)

// SmokeEnv turns the benchmarks' smoke runs on: `make bench` sets it, and .ci/run runs `make
// bench`. Without it they skip, so that `go test ./...` does not load the machine with them
// while the real-cluster tests run.
const SmokeEnv = "HOLDFAST_BENCH_SMOKE"

// smokeTimeout bounds one smoke run: each is meant to take seconds.
const smokeTimeout = 5 * time.Minute

// Smoke runs a benchmark in a test at tiny sizes and asserts only that it completes: a program
// that no CI runs rots unseen (the soak stopped starting once, and bench/drift broke the same
// way). Its tables go to the test's output; its numbers mean nothing at these sizes.
func Smoke(t *testing.T, run func(context.Context) error) {
	t.Helper()
	if os.Getenv(SmokeEnv) != "1" {
		t.Skipf("a benchmark's smoke run: set %s=1 (make bench)", SmokeEnv)
	}
	testsupport.RequireBinaries(t)
	logger := zap.New(zap.Level(zapcore.ErrorLevel), zap.WriteTo(os.Stderr))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	ctx, cancel := context.WithTimeout(t.Context(), smokeTimeout)
	defer cancel()
	if err := run(ctx); err != nil {
		t.Fatalf("the benchmark failed at smoke sizes: %v", err)
	}
}

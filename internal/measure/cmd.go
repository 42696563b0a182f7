package measure

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// What every benchmark's main does: parse and check its flags (ParseFlags), then run (Main).

// Bound is a lower bound on an int flag, for ParseFlags.
type Bound struct {
	name  string
	least int
}

// AtLeast bounds the int flag name (without its dash) from below.
func AtLeast(name string, least int) Bound { return Bound{name: name, least: least} }

// ParseFlags parses the command line (flag.Parse) and checks the bounds. If a flag is below its
// bound, it prints one line stating every bound, such as "Error: -objects must be at least 10
// and -clusters at least 1", to stderr and exits with status 2, as the flag package does for a
// value it cannot parse. A bound on a flag that is not defined, or not an int, panics.
func ParseFlags(bounds ...Bound) {
	flag.Parse()
	if msg := checkBounds(flag.CommandLine, bounds); msg != "" {
		fmt.Fprintln(os.Stderr, "Error:", msg)
		os.Exit(2)
	}
}

// checkBounds returns "" if every bound holds, else the message ParseFlags prints.
func checkBounds(fs *flag.FlagSet, bounds []Bound) string {
	ok := true
	for _, b := range bounds {
		f := fs.Lookup(b.name)
		if f == nil {
			panic("measure.AtLeast: no flag -" + b.name)
		}
		v, isInt := f.Value.(flag.Getter).Get().(int)
		if !isInt {
			panic("measure.AtLeast: -" + b.name + " is not an int flag")
		}
		ok = ok && v >= b.least
	}
	if ok {
		return ""
	}
	// Flags with the same bound, one after another, share it: "-clusters and -sets at least 1".
	var groups [][]Bound
	for i, b := range bounds {
		if i > 0 && b.least == bounds[i-1].least {
			groups[len(groups)-1] = append(groups[len(groups)-1], b)
		} else {
			groups = append(groups, []Bound{b})
		}
	}
	var msg strings.Builder
	for i, g := range groups {
		switch {
		case i == 0:
		case i == len(groups)-1 && len(g) == 1:
			msg.WriteString(" and ")
		default:
			msg.WriteString(", ")
		}
		for j, b := range g {
			switch {
			case j == 0:
			case j == len(g)-1:
				msg.WriteString(" and ")
			default:
				msg.WriteString(", ")
			}
			msg.WriteString("-" + b.name)
		}
		if i == 0 {
			msg.WriteString(" must be")
		}
		fmt.Fprintf(&msg, " at least %d", g[0].least)
	}
	return msg.String()
}

// Main runs a benchmark: the controller's and client-go's logs go to stderr, errors only (info
// logs would cost CPU in the measured windows; BENCH_LOG_LEVEL=info or debug to follow a run),
// SIGINT and SIGTERM cancel run's context, and an error ends the program with status 1.
func Main(run func(context.Context) error) {
	level := zapcore.ErrorLevel
	if l, err := zapcore.ParseLevel(os.Getenv("BENCH_LOG_LEVEL")); err == nil && os.Getenv("BENCH_LOG_LEVEL") != "" {
		level = l
	}
	logger := zap.New(zap.Level(level), zap.WriteTo(os.Stderr))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

// ParseClusterCounts parses a flag's comma-separated list of numbers of clusters, each at least 1.
func ParseClusterCounts(v string) ([]int, error) {
	var counts []int
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a number of clusters", f)
		}
		counts = append(counts, n)
	}
	return counts, nil
}

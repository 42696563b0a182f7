package measure

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// userHZ is the unit of utime and stime in /proc/<pid>/stat (sysconf(_SC_CLK_TCK)), 100 on every
// Linux architecture Go supports.
const userHZ = 100

// RSS returns a process's resident set size (VmRSS) in bytes.
func RSS(pid int) (int64, error) { return statusKiB(pid, "VmRSS") }

// PeakRSS returns the highest resident set size a process has had so far (VmHWM) in bytes.
func PeakRSS(pid int) (int64, error) { return statusKiB(pid, "VmHWM") }

// statusKiB reads a field given in kB from /proc/<pid>/status, in bytes.
func statusKiB(pid int, field string) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the status of pid %d: %w", pid, err)
	}
	for line := range strings.Lines(string(status)) {
		rest, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing %s of pid %d: %w", field, pid, err)
		}
		return kib << 10, nil
	}
	return 0, fmt.Errorf("pid %d has no %s (a zombie?)", pid, field)
}

// CPUTime returns the user plus system CPU time a process has used, with a resolution of
// 1/userHZ seconds (10ms).
func CPUTime(pid int) (time.Duration, error) {
	path := fmt.Sprintf("/proc/%d/stat", pid)
	if pid == os.Getpid() {
		path = "/proc/self/stat"
	}
	stat, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	// Fields follow the parenthesized command name, which may itself contain spaces or ")".
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("parsing %s: no command name", path)
	}
	fields := strings.Fields(string(stat[i+1:]))
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("parsing %s: only %d fields", path, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing %s: %w", path, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// Command returns the base name of a process's argv[0], e.g. "kube-apiserver"; /proc/<pid>/comm
// would cut "kube-controller-manager" to 15 characters.
func Command(pid int) string {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return "?"
	}
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	return filepath.Base(string(argv0))
}

// Machine describes where a benchmark ran: CPUs, memory, kernel, Go and the load average when it
// started, since the benchmarks share the machine with whatever else runs on it.
func Machine() string {
	mem := "?"
	if meminfo, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(meminfo)) {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kib, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				mem = fmt.Sprintf("%.1f GiB", float64(kib)/(1<<20))
			}
		}
	}
	kernel := "?"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	model := "?"
	if cpuinfo, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(cpuinfo)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs (%s), %s RAM, Linux %s, %s, %s/%s, load average at start: %s",
		runtime.NumCPU(), model, mem, kernel, runtime.Version(), runtime.GOOS, runtime.GOARCH, LoadAverage())
}

// LoadAverage returns the 1, 5 and 15 minute load averages.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// Spread is the minimum, median and maximum of some samples.
type Spread[T int64 | time.Duration] struct{ Min, Median, Max T }

// SpreadOf returns the spread of samples, which must not be empty. The median of an even number
// of samples is the mean of the middle two.
func SpreadOf[T int64 | time.Duration](samples []T) Spread[T] {
	s := slices.Clone(samples)
	slices.Sort(s)
	n := len(s)
	median := s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return Spread[T]{Min: s[0], Median: median, Max: s[n-1]}
}

// MiB formats a byte count in MiB.
func MiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// Seconds formats a duration in seconds with millisecond precision.
func Seconds(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }

// Ratio formats a ÷ b as a factor, such as "1.32×", and as "–" when b is not above zero (no
// ideal or baseline to compare with).
func Ratio[T time.Duration | float64](a, b T) string {
	if b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}

// Table is a Markdown table.
type Table struct {
	header []string
	rows   [][]string
}

// NewTable starts a table with the given column headers.
func NewTable(header ...string) *Table { return &Table{header: header} }

// Row appends a row.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// String renders the table, columns padded so that it also reads well as plain text.
func (t *Table) String() string {
	widths := make([]int, len(t.header))
	for _, row := range append([][]string{t.header}, t.rows...) {
		for i, c := range row {
			if i < len(widths) {
				widths[i] = max(widths[i], utf8.RuneCountInString(c)) // fmt pads by runes
			}
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for i, w := range widths {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			fmt.Fprintf(&b, " %-*s |", w, c)
		}
		b.WriteString("\n")
	}
	line(t.header)
	sep := make([]string, len(widths))
	for i, w := range widths {
		sep[i] = strings.Repeat("-", w)
	}
	line(sep)
	for _, r := range t.rows {
		line(r)
	}
	return b.String()
}

// WriteHeapProfile writes a heap profile of this process (go tool pprof) to path, after a forced
// collection.
func WriteHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the heap profile: %w", err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		return fmt.Errorf("writing the heap profile: %w", err)
	}
	return nil
}

// StartCPUProfile starts a CPU profile of this process (go tool pprof) written to path; the
// returned function stops it and closes the file. With path "" it profiles nothing.
func StartCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("writing the CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting the CPU profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

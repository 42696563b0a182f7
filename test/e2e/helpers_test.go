package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/sandbox"
)

// buildHoldfast builds the holdfast binary into a temporary directory, as a user would with
// `go build`, and returns its path.
func buildHoldfast(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "holdfast")
	began := time.Now()
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "holdfast.dev/holdfast/cmd/holdfast").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/holdfast: %v\n%s", err, out)
	}
	t.Logf("Built %s in %s", bin, time.Since(began).Round(time.Millisecond))
	return bin
}

// holdfastProcess is a running holdfast command.
type holdfastProcess struct {
	cmd    *exec.Cmd
	stdout *lineWatcher
	stderr string // file receiving stderr (the logs)

	done    chan struct{} // closed once the process has exited and been reaped
	waitErr error         // valid after done is closed
}

// startHoldfast runs bin with args. stdout is watched for readyPrefix; stderr goes to a file
// whose end is logged if the test fails. The process is killed by the kernel if the test binary
// dies (its own children then follow, see internal/sandbox), and stopped at cleanup if the test
// did not stop it.
func startHoldfast(t *testing.T, bin, readyPrefix string, args ...string) *holdfastProcess {
	t.Helper()
	stderrPath := filepath.Join(t.TempDir(), "holdfast.stderr")
	stderr, err := os.Create(stderrPath)
	if err != nil {
		t.Fatalf("creating the stderr file: %v", err)
	}
	p := &holdfastProcess{
		cmd:    exec.Command(bin, args...),
		stdout: newLineWatcher(readyPrefix),
		stderr: stderrPath,
		done:   make(chan struct{}),
	}
	p.cmd.Stdout = p.stdout
	p.cmd.Stderr = stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		_ = stderr.Close()
		t.Fatalf("starting %s %s: %v", bin, strings.Join(args, " "), err)
	}
	t.Logf("Started holdfast %s (pid %d)", strings.Join(args, " "), p.cmd.Process.Pid)
	go func() {
		p.waitErr = p.cmd.Wait()
		_ = stderr.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("holdfast stdout:\n%s", p.stdout.String())
			t.Logf("holdfast stderr (last 80 lines):\n%s", tail(p.stderr, 80))
		}
		if p.exited() {
			return
		}
		// The test ended early; stop it the way a user would, and harder if that does not work.
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(60 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *holdfastProcess) pid() int { return p.cmd.Process.Pid }

func (p *holdfastProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitCode is the exit status once the process has exited; -1 if a signal ended it.
func (p *holdfastProcess) exitCode() int { return p.cmd.ProcessState.ExitCode() }

// lineWatcher is an io.Writer that keeps everything written to it and closes found once a
// complete line starting with prefix has been written.
type lineWatcher struct {
	prefix string
	found  chan struct{}

	mu   sync.Mutex
	buf  bytes.Buffer
	line string // the first matching line, guarded by mu
}

func newLineWatcher(prefix string) *lineWatcher {
	return &lineWatcher{prefix: prefix, found: make(chan struct{})}
}

func (w *lineWatcher) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if w.line != "" {
		return len(b), nil
	}
	for line := range strings.Lines(w.buf.String()) {
		if strings.HasSuffix(line, "\n") && strings.HasPrefix(line, w.prefix) {
			w.line = strings.TrimSuffix(line, "\n")
			close(w.found)
			break
		}
	}
	return len(b), nil
}

// Line returns the first line that started with the prefix, once found is closed.
func (w *lineWatcher) Line() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.line
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// tail returns the last n lines of a file, for failure messages.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// proc is a process found in /proc.
type proc struct {
	pid     int
	command string // base name of argv[0]
}

func (p proc) String() string { return fmt.Sprintf("%s[%d]", p.command, p.pid) }

// processesMentioning lists the live processes, other than the excluded pids, with an argument
// that contains s. The sandbox's children each get paths under the sandbox directory (etcd's
// data dir, kube-apiserver's certificates, kube-controller-manager's kubeconfig), so this finds
// them without trusting Holdfast to report its own children.
func processesMentioning(s string, exclude ...int) ([]proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	var found []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || slices.Contains(exclude, pid) || !sandbox.ProcessAlive(pid) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
				continue // exited while we looked
			}
			return nil, fmt.Errorf("reading the command line of pid %d: %w", pid, err)
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if len(args) == 0 || args[0] == "" {
			continue // kernel thread or zombie
		}
		for _, arg := range args[1:] {
			if strings.Contains(arg, s) {
				found = append(found, proc{pid: pid, command: filepath.Base(args[0])})
				break
			}
		}
	}
	return found, nil
}

package main

import (
	"holdfast.dev/holdfast/internal/localfleet"

	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// controllerProc runs `holdfast controller` as a child process, so that it can be killed with
// SIGKILL, as a node failure or an OOM kill would, and started again. Its output goes to one log
// file, every incarnation after a header line.
type controllerProc struct {
	binary, kubeconfig, logPath string
	args                        []string

	mu      sync.Mutex
	cmd     *exec.Cmd
	killed  bool // set before this program signals the running incarnation
	starts  int
	running bool
	started time.Time // of the running or last incarnation
	// runs are the incarnations' lifetimes (to zero while it runs), for the recorded-once check.
	runs []span
	// unexpected lists every exit this program did not cause.
	unexpected []string
}

// buildHoldfast builds cmd/holdfast into dir: from the module this program is run in when
// commit is empty, else from that commit's tree (git archive, so the working tree and the index
// are left alone).
func buildHoldfast(ctx context.Context, dir, commit string) (string, error) {
	bin := filepath.Join(dir, "holdfast")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "holdfast.dev/holdfast/cmd/holdfast")
	if commit != "" {
		src := filepath.Join(dir, "src")
		tarball := filepath.Join(dir, "src.tar")
		if err := os.MkdirAll(src, 0o755); err != nil {
			return "", err
		}
		for _, c := range [][]string{{"git", "archive", "--format=tar", "--output=" + tarball, commit}, {"tar", "-xf", tarball, "-C", src}} {
			if out, err := exec.CommandContext(ctx, c[0], c[1:]...).CombinedOutput(); err != nil {
				return "", fmt.Errorf("%s: %w\n%s", strings.Join(c, " "), err, out)
			}
		}
		cmd.Dir = src
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/holdfast: %w\n%s", err, out)
	}
	return bin, nil
}

func newControllerProc(binary, kubeconfig, logPath string) *controllerProc {
	return &controllerProc{
		binary: binary, kubeconfig: kubeconfig, logPath: logPath,
		// Metrics and health probes off (no port to pick), no leader election (one replica), info
		// logs so that the leak scan reads everything the controller says at work. The platform
		// namespaces are the Clusters' and the templates' (the default is the controller's own
		// namespace alone).
		args: []string{"controller", "--kubeconfig", kubeconfig, "--metrics-bind-address", "0",
			"--health-probe-bind-address", "0", "--leader-elect=false", "--log-level", "info",
			"--platform-namespaces", localfleet.DefaultNamespace + "," + hubNamespace},
	}
}

// start starts a new incarnation. It is an error to start while one runs.
func (p *controllerProc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		return fmt.Errorf("the controller is already running")
	}
	f, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	p.starts++
	fmt.Fprintf(f, "=== soak: controller start #%d at %s\n", p.starts, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(p.binary, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group, and killed by the kernel if this program dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return fmt.Errorf("starting %s: %w", p.binary, err)
	}
	p.cmd, p.killed, p.running, p.started = cmd, false, true, time.Now()
	p.runs = append(p.runs, span{from: p.started})
	n, run := p.starts, len(p.runs)-1
	go func() {
		err := cmd.Wait()
		_ = f.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.cmd == cmd {
			p.running = false
		}
		p.runs[run].to = time.Now()
		if !p.killed {
			p.unexpected = append(p.unexpected, fmt.Sprintf("incarnation #%d (pid %d) exited on its own at %s: %v",
				n, cmd.Process.Pid, time.Now().UTC().Format(time.RFC3339), err))
		}
	}()
	return nil
}

// kill sends SIGKILL and waits until the process is gone.
func (p *controllerProc) kill() error { return p.signal(syscall.SIGKILL) }

// stop sends SIGTERM (the end of the soak) and waits until the process is gone.
func (p *controllerProc) stop() error { return p.signal(syscall.SIGTERM) }

func (p *controllerProc) signal(sig syscall.Signal) error {
	p.mu.Lock()
	cmd := p.cmd
	if !p.running || cmd == nil {
		p.mu.Unlock()
		return nil
	}
	p.killed = true
	p.mu.Unlock()
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("signalling the controller: %w", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if !p.isRunning() {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("the controller (pid %d) did not exit within 30s of %s", cmd.Process.Pid, sig)
}

// runningFor is how long the running incarnation has run; 0 when none runs.
func (p *controllerProc) runningFor() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running {
		return 0
	}
	return time.Since(p.started)
}

// pid is the process id of the running incarnation; 0 when none runs.
func (p *controllerProc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running || p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// ranThrough says whether one incarnation ran from from until to (or still runs).
func (p *controllerProc) ranThrough(from, to time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.runs {
		if !r.from.After(from) && (r.to.IsZero() || !r.to.Before(to)) {
			return true
		}
	}
	return false
}

// startsIn counts the incarnations started in (from, to].
func (p *controllerProc) startsIn(from, to time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, r := range p.runs {
		if r.from.After(from) && !r.from.After(to) {
			n++
		}
	}
	return n
}

func (p *controllerProc) isRunning() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running
}

// takeUnexpected returns the exits this program did not cause since the last call.
func (p *controllerProc) takeUnexpected() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.unexpected
	p.unexpected = nil
	return out
}

// logScanner reads the controller's log from where it left off, looking for panics and for the
// planted Secret values (as they are and base64-encoded).
type logScanner struct {
	path   string
	offset int64
	lines  int64
}

type logFinding struct{ what, line string }

func (s *logScanner) scan(secretValues []string) ([]logFinding, error) {
	f, err := os.Open(s.path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(s.offset, io.SeekStart); err != nil {
		return nil, err
	}
	needles := leakNeedles(secretValues)
	var found []logFinding
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			s.offset += int64(len(line))
			s.lines++
			if bytes.Contains(bytes.ToLower(line), []byte("panic")) {
				found = append(found, logFinding{"panic", clip(string(line), 400)})
			}
			for _, n := range needles {
				if bytes.Contains(line, []byte(n.text)) {
					found = append(found, logFinding{"secret value (" + n.form + ")", "line " + fmt.Sprint(s.lines) + " of " + filepath.Base(s.path) + " (not quoted: it holds the value)"})
				}
			}
		}
		if err != nil {
			// A partial last line is read again next time.
			return found, nil
		}
	}
}

type needle struct{ text, form string }

// leakNeedles are the forms a planted value could leak in: as is, and base64 (as Secret data is
// served), which also covers a log of the raw bytes of a Secret.
func leakNeedles(values []string) []needle {
	var out []needle
	for _, v := range values {
		out = append(out, needle{v, "plain"}, needle{base64.StdEncoding.EncodeToString([]byte(v)), "base64"})
	}
	return out
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

const (
	// stopGrace is how long a process gets to exit after SIGTERM before it is killed.
	stopGrace = 10 * time.Second
	// killWait bounds the wait after SIGKILL, which only a process stuck in the kernel survives.
	killWait = 5 * time.Second
	// tailLines is how much of a process's output an error quotes.
	tailLines = 20
)

// process is one running child: etcd, kube-apiserver, kube-controller-manager, kube-scheduler
// or kwok.
type process struct {
	name string
	cmd  *exec.Cmd
	tail *tailBuffer
	out  io.WriteCloser

	done    chan struct{} // closed once the process has exited and been reaped
	waitErr error         // valid after done is closed
}

// startProcess starts binary in its own process group (so Stop can signal anything it forks
// and a terminal's Ctrl-C goes to the parent only) with Pdeathsig, so that the kernel kills it
// if the Go process dies without calling Stop, e.g. on SIGKILL or a test timeout.
//
// Pdeathsig fires when the OS thread that forked the child exits, not only the process. The
// Go runtime never ends its threads, except one locked with runtime.LockOSThread whose
// goroutine returns, so do not start a control plane from such a goroutine.
func startProcess(name, binary string, args []string, out io.WriteCloser, env ...string) (*process, error) {
	p := &process{name: name, tail: newTailBuffer(16 << 10), out: out, done: make(chan struct{})}
	cmd := exec.Command(binary, args...)
	// Of duplicate keys, exec uses the last: env overrides what is inherited.
	cmd.Env = append(childEnv(), env...)
	cmd.Stdout = io.MultiWriter(out, p.tail)
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// A grandchild holding the output pipe open must not make Wait hang forever.
	cmd.WaitDelay = time.Second
	p.cmd = cmd
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		_ = out.Close()
		close(p.done)
	}()
	return p, nil
}

// childEnv drops variables that the children would read as configuration behind our flags'
// back: etcd reads every ETCD_* variable as a flag.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ETCD_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after stopGrace. An exit status
// caused by those signals is not an error: stopping is what the caller asked for.
func (p *process) stop() error {
	if p.exited() {
		return nil
	}
	p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(stopGrace):
	}
	p.signal(syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("%s (pid %d) still running %s after SIGKILL", p.name, p.pid(), killWait)
	}
}

func (p *process) signal(sig syscall.Signal) {
	// The group id is the pid because of Setpgid. ESRCH only means it is already gone.
	if err := syscall.Kill(-p.pid(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = p.cmd.Process.Signal(sig)
	}
}

// exitError describes an unexpected exit, quoting the end of the output, which is where
// kube-apiserver and etcd say why they gave up.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited early (%v); last output:\n%s", p.name, p.waitErr, p.tail.lastLines(tailLines))
}

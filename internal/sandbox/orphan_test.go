package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// helperEnv turns TestHelperProcess into the parent that TestParentKilled kills.
const helperEnv = "HOLDFAST_SANDBOX_HELPER_DIR"

// TestHelperProcess is not a test: run by TestParentKilled, it starts a control plane with
// every process (kube-controller-manager, and kube-scheduler and kwok for a simulated node),
// prints its pids and waits to be killed.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("helper process for TestParentKilled")
	}
	c, err := Start(context.Background(), Options{Name: "orphan", Dir: dir, ControllerManager: true, Nodes: 1})
	if err != nil {
		fmt.Printf("ERROR %v\n", strings.ReplaceAll(err.Error(), "\n", " | "))
		os.Exit(1)
	}
	fields := make([]string, 0, 5)
	for _, pid := range c.PIDs() {
		fields = append(fields, strconv.Itoa(pid))
	}
	fmt.Printf("PIDS %s\n", strings.Join(fields, " "))
	time.Sleep(10 * time.Minute)
	os.Exit(2)
}

// TestParentKilled checks that a SIGKILLed parent, which gets no chance to call Stop, takes
// its control plane with it: the children die by Pdeathsig.
func TestParentKilled(t *testing.T) {
	requireBinaries(t)
	g := NewWithT(t)

	subreaper := becomeSubreaper()
	if subreaper != nil {
		t.Logf("Killed control-plane processes may linger as zombies: %v", subreaper)
	}
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	helper.Env = append(os.Environ(), helperEnv+"="+t.TempDir())
	stdout, err := helper.StdoutPipe()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(helper.Start()).To(Succeed())
	t.Cleanup(func() {
		_ = helper.Process.Kill()
		_ = helper.Wait()
	})

	lines := make(chan string)
	go func() {
		defer close(lines)
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			lines <- scanner.Text()
		}
	}()
	var pids []int
	deadline := time.After(2 * readyTimeout)
	for pids == nil {
		select {
		case line, ok := <-lines:
			g.Expect(ok).To(BeTrue(), "helper exited without printing its pids")
			g.Expect(line).NotTo(HavePrefix("ERROR"))
			if rest, found := strings.CutPrefix(line, "PIDS "); found {
				for _, field := range strings.Fields(rest) {
					pid, err := strconv.Atoi(field)
					g.Expect(err).NotTo(HaveOccurred())
					pids = append(pids, pid)
				}
			}
		case <-deadline:
			t.Fatal("helper did not start a control plane in time")
		}
	}
	g.Expect(pids).To(HaveLen(5))
	g.Expect(livePIDs(pids)).To(HaveLen(5))

	g.Expect(helper.Process.Kill()).To(Succeed())
	_ = helper.Wait()
	began := time.Now()
	g.Eventually(func() []int {
		var remaining []int
		for _, pid := range pids {
			reap(pid)
			// As their subreaper this process reaps them, so even a zombie means not yet.
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); (subreaper == nil && err == nil) || ProcessAlive(pid) {
				remaining = append(remaining, pid)
			}
		}
		return remaining
	}).WithTimeout(5 * time.Second).Should(BeEmpty())
	t.Logf("Orphaned control plane gone %s after its parent was killed", time.Since(began).Round(time.Millisecond))
}

// becomeSubreaper makes this test process the new parent of the control-plane processes once
// the helper dies, so that it can reap them: in a container, PID 1 often reaps nobody and the
// killed processes would stay behind as zombies.
func becomeSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", errno)
	}
	return nil
}

// reap collects pid if it is a dead child of this process; for anything else it does nothing.
func reap(pid int) {
	var status syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &status, syscall.WNOHANG, nil)
}

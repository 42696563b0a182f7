package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/agent"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/onboard"
)

// agentSpec is one simulated Pull cluster as its agent is given it: its name, its own
// namespace-limited kubeconfig and the bootstrap kubeconfig of its hub identity.
type agentSpec struct {
	Name      string `json:"name"`
	Own       []byte `json:"own"`
	Bootstrap []byte `json:"bootstrap"`
}

// agentStartWorkers bootstrap agents at once (a Secret written on each one's own cluster).
const agentStartWorkers = 32

// registerPull registers every simulated cluster on the hub as a Pull cluster (onboard.RegisterPull,
// as `holdfast cluster add --pull` does: its namespace, the agent's ServiceAccount and RBAC, a
// bootstrap token), labelled as the Push fleet's Clusters are, and returns what each agent starts
// with.
func (b *bench) registerPull(ctx context.Context) ([]agentSpec, error) {
	hubCfg := rest.CopyConfig(b.Fleet.Hub.RESTConfig())
	hubCfg.QPS, hubCfg.Burst = -1, 0
	hubCS, err := kubernetes.NewForConfig(hubCfg)
	if err != nil {
		return nil, fmt.Errorf("building the hub clientset: %w", err)
	}
	hub, err := client.New(hubCfg, client.Options{Scheme: b.scheme})
	if err != nil {
		return nil, fmt.Errorf("building the hub client: %w", err)
	}
	specs := make([]agentSpec, len(b.Sims))
	err = measure.Parallel(ctx, 16, len(b.Sims), func(ctx context.Context, i int) error {
		sim := b.Sims[i]
		labels := map[string]string{measure.SimFleetLabel: measure.SimFleetValue, measure.SimServerLabel: b.Names[b.Server[sim]]}
		bootstrap, err := onboard.RegisterPull(ctx, hub, hubCS, hubCfg, onboard.PullOptions{Name: sim, Labels: labels, Wait: 5 * time.Minute})
		if err != nil {
			return fmt.Errorf("registering %s in Pull mode: %w", sim, err)
		}
		specs[i] = agentSpec{Name: sim, Own: b.Kubeconfigs[sim], Bootstrap: bootstrap}
		return nil
	})
	return specs, err
}

// metricsSuffix ends the name of the file, beside the agents' spec, where the agents' process
// writes the address of its metrics (serveMetrics).
const metricsSuffix = ".metrics"

// agentsProcess is the process the agents run in, started by startAgents, or with cmd nil
// this one (startAgentsHere).
type agentsProcess struct {
	cmd *exec.Cmd
	// metrics is the file naming the address of the process's metrics.
	metrics string
	log     string
	cancel  context.CancelFunc
	// exited is closed when the agents ended, err then says why.
	exited chan struct{}
	err    error
}

// startAgentsHere runs the agents of specs in this process until stop.
func startAgentsHere(ctx context.Context, specs []agentSpec) *agentsProcess {
	ctx, cancel := context.WithCancel(ctx)
	p := &agentsProcess{exited: make(chan struct{}), cancel: cancel}
	go func() { p.err = runAgentsOf(ctx, specs); close(p.exited) }()
	return p
}

// ended says why the agents ended, nil while they run.
func (p *agentsProcess) ended() error {
	select {
	case <-p.exited:
		if p.err == nil {
			return errors.New("the agents ended")
		}
		return fmt.Errorf("the agents ended: %w", p.err)
	default:
		return nil
	}
}

// startAgents runs the agents of specs in a process of their own (this program again, with
// -agents-spec), so that the hub controller's memory (this process's) is measured alone. Its
// output goes to a file in dir.
func startAgents(ctx context.Context, dir string, specs []agentSpec) (*agentsProcess, error) {
	data, err := json.Marshal(specs)
	if err != nil {
		return nil, err
	}
	spec := filepath.Join(dir, "agents.json")
	if err := os.WriteFile(spec, data, 0o600); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p := &agentsProcess{log: filepath.Join(dir, "agents.log"), metrics: spec + metricsSuffix, exited: make(chan struct{})}
	out, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.CommandContext(ctx, self, "-agents-spec", spec)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.Env = os.Environ()
	p.cmd.Cancel = func() error { return p.cmd.Process.Signal(syscall.SIGTERM) }
	p.cmd.WaitDelay = 30 * time.Second
	if err := p.cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("starting the agents' process: %w", err)
	}
	go func() { p.err = p.cmd.Wait(); _ = out.Close(); close(p.exited) }()
	return p, nil
}

// reconciles are the agents' reconciles so far, from their process's metrics; none when they run
// in this process (gatherReconcileTimes counts them with the hub controller's).
func (p *agentsProcess) reconciles(ctx context.Context) (reconcileTimes, error) {
	if p.cmd == nil {
		return reconcileTimes{}, nil
	}
	url, err := os.ReadFile(p.metrics)
	if err != nil {
		return nil, fmt.Errorf("the address of the agents' metrics: %w", err)
	}
	return scrapeReconcileTimes(ctx, string(url))
}

// pid is the agents' process.
func (p *agentsProcess) pid() int {
	if p.cmd == nil {
		return os.Getpid()
	}
	return p.cmd.Process.Pid
}

// stop ends the agents and waits for them.
func (p *agentsProcess) stop() error {
	if p.cmd == nil {
		p.cancel()
		<-p.exited
		return p.err
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		err := p.err
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == -1 {
			return nil // ended by the signal
		}
		if err != nil {
			return fmt.Errorf("the agents' process (its output: %s): %w", p.log, err)
		}
		return nil
	case <-time.After(45 * time.Second):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("the agents' process did not stop in 45s (its output: %s)", p.log)
	}
}

// runAgents is the agents' process: it reads the specs from path and runs every agent until ctx
// ends, each with only its own cluster's kubeconfig, as `holdfast agent` does in a cluster (the
// agent's hub Secret written first, as the manifests `holdfast cluster add --pull` prints do).
func runAgents(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var specs []agentSpec
	if err := json.Unmarshal(data, &specs); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if err := serveMetrics(ctx, path+metricsSuffix); err != nil {
		return fmt.Errorf("serving the agents' metrics: %w", err)
	}
	return runAgentsOf(ctx, specs)
}

// restartMark starts the line the agents' process writes when an agent ended and is started
// again (countRestarts counts them).
const restartMark = "Restarting the agent of "

// runRestarted runs the agent of cluster until ctx ends, starting it again when it ends with an
// error, after a delay doubling from 10 s to 5 minutes, as a kubelet restarts a container that
// exits.
func runRestarted(ctx context.Context, cluster string, o agent.Options) {
	delay := 10 * time.Second
	for {
		err := agent.Run(ctx, o)
		if ctx.Err() != nil {
			return
		}
		fmt.Fprintf(os.Stderr, "%s%s in %s: %v\n", restartMark, cluster, delay, err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Minute)
	}
}

// countRestarts counts the agents started again in the agents' process's output at path.
func countRestarts(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(data), restartMark)
}

// runAgentsOf runs the agents of specs in this process until ctx ends.
func runAgentsOf(ctx context.Context, specs []agentSpec) error {
	scheme, err := controller.Scheme()
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	err = measure.Parallel(ctx, agentStartWorkers, len(specs), func(ctx context.Context, i int) error {
		s := specs[i]
		own, err := fleet.RESTConfigFromKubeconfig(s.Own)
		if err != nil {
			return fmt.Errorf("the kubeconfig of %s: %w", s.Name, err)
		}
		ownClient, err := client.New(own, client.Options{Scheme: scheme})
		if err != nil {
			return err
		}
		// Each simulated cluster is a namespace: the agent's Secrets live there.
		secret := types.NamespacedName{Namespace: s.Name, Name: onboard.AgentHubSecret}
		if err := agent.Bootstrap(ctx, ownClient, secret, s.Bootstrap); err != nil {
			return fmt.Errorf("bootstrapping the agent of %s: %w", s.Name, err)
		}
		o := agent.Options{Cluster: types.NamespacedName{Namespace: onboard.PullNamespace(s.Name), Name: s.Name},
			Own: own, HubSecret: secret, Scheme: scheme, Version: "bench",
			Controller: controller.Options{SkipNameValidation: true}}
		wg.Go(func() { runRestarted(ctx, s.Name, o) })
		return nil
	})
	if err != nil {
		return err // the agents started end with ctx
	}
	fmt.Fprintf(os.Stderr, "%d agents started\n", len(specs))
	wg.Wait() // runRestarted returns only once ctx ends
	return nil
}

// agentReconciles are the agents' reconciles so far (agentsProcess.reconciles); none in Push
// mode.
func (b *bench) agentReconciles(ctx context.Context) (reconcileTimes, error) {
	if b.agents == nil {
		return reconcileTimes{}, nil
	}
	return b.agents.reconciles(ctx)
}

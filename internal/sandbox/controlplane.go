package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// Options configures one control plane.
type Options struct {
	// Name names the cluster in kubeconfigs (cluster, user and context names) and in log file
	// names. Required.
	Name string
	// Dir holds certificates, etcd data, logs and the kubeconfig. If empty, a fresh temporary
	// directory is used and removed by Stop; a given Dir is left in place.
	Dir string
	// BinaryDir holds the control-plane binaries (see BinaryDir); default BinaryDir().
	BinaryDir string
	// ControllerManager also runs kube-controller-manager, for tests that need Deployments to
	// make ReplicaSets, garbage collection, namespace deletion to finish, and the like.
	ControllerManager bool
	// Nodes is the number of simulated nodes, named by NodeName. With Nodes > 0 the control
	// plane also runs kube-scheduler, which binds pods to them, and kwok, which plays each
	// node's heartbeat and each pod's lifecycle as a kubelet would: pods become Running and
	// Ready, and, with ControllerManager, Deployments become Available. A pod annotated
	// SimulateFailureAnnotation crash-loops instead. 0 runs neither, as before.
	Nodes int
	// DisableAdmissionPolicies makes kube-apiserver serve neither mutatingadmissionpolicies nor
	// validatingadmissionpolicies (admissionregistration.k8s.io/v1), as a cluster older than
	// Kubernetes 1.30 would not: for tests of what Holdfast does on such a target.
	DisableAdmissionPolicies bool
	// Logs receives the processes' output, each line prefixed with "[<Name>/<process>] ".
	// If nil, output goes to <Dir>/logs/<Name>-<process>.log.
	Logs io.Writer
}

// ControlPlane is a running etcd and kube-apiserver, and optionally kube-controller-manager and
// simulated nodes (kube-scheduler and kwok), listening on loopback. Its methods are safe for concurrent use.
type ControlPlane struct {
	// Set by Start and never changed afterwards.
	name      string
	dir       string
	removeDir bool
	binaryDir string
	withKCM   bool
	// noAdmissionPolicies is Options.DisableAdmissionPolicies.
	noAdmissionPolicies bool
	nodes               int
	logs                io.Writer
	pki                 *pki
	etcdURL             string
	apiPort             int
	host                string
	kubeconfig          []byte

	// lifecycle serializes Stop, StopAPIServer and StartAPIServer, which can take seconds.
	lifecycle sync.Mutex
	stopped   bool // guarded by lifecycle
	// stopping is closed as soon as Stop is called, so that a StartAPIServer waiting for
	// readiness gives up at once instead of holding lifecycle for a minute.
	stopping  chan struct{}
	closeOnce sync.Once

	// mu guards the fields below; held only briefly so PIDs never waits for a lifecycle step.
	mu                sync.Mutex
	etcd              *process
	apiServer         *process
	controllerManager *process
	scheduler         *process
	kwok              *process
	reservation       *portReservation
}

// Start starts a control plane and returns once kube-apiserver's /readyz is ok, with
// Options.ControllerManager, kube-controller-manager is running its controllers and, with
// Options.Nodes, kube-scheduler is healthy and kwok has made every simulated node Ready. ctx bounds
// the start only; the processes run until Stop. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	c, err := newControlPlane(opts)
	if err != nil {
		return nil, fmt.Errorf("starting control plane %q: %w", opts.Name, err)
	}
	if err := c.start(ctx); err != nil {
		return nil, fmt.Errorf("starting control plane %q: %w", opts.Name, errors.Join(err, c.Stop()))
	}
	return c, nil
}

// StartMany starts control planes in parallel and returns them in the order of opts. If any
// fails, the others are stopped and the errors of all failed starts are returned.
func StartMany(ctx context.Context, opts []Options) ([]*ControlPlane, error) {
	planes := make([]*ControlPlane, len(opts))
	errs := make([]error, len(opts))
	var wg sync.WaitGroup
	for i := range opts {
		wg.Go(func() { planes[i], errs[i] = Start(ctx, opts[i]) })
	}
	wg.Wait()
	err := errors.Join(errs...)
	if err == nil {
		return planes, nil
	}
	for _, c := range planes {
		if c != nil {
			err = errors.Join(err, c.Stop())
		}
	}
	return nil, err
}

func newControlPlane(opts Options) (*ControlPlane, error) {
	if opts.Name == "" {
		return nil, errors.New("Options.Name is required")
	}
	if opts.Nodes < 0 {
		return nil, fmt.Errorf("Options.Nodes must not be negative, got %d", opts.Nodes)
	}
	if strings.ContainsAny(opts.Name, `/\`) {
		return nil, fmt.Errorf("Options.Name %q must not contain a path separator: it names log files", opts.Name)
	}
	binaryDir := opts.BinaryDir
	if binaryDir == "" {
		var err error
		if binaryDir, err = BinaryDir(); err != nil {
			return nil, err
		}
	} else if err := checkBinaries(binaryDir); err != nil {
		return nil, err
	}
	c := &ControlPlane{
		name:                opts.Name,
		dir:                 opts.Dir,
		binaryDir:           binaryDir,
		withKCM:             opts.ControllerManager,
		noAdmissionPolicies: opts.DisableAdmissionPolicies,
		nodes:               opts.Nodes,
		logs:                opts.Logs,
		stopping:            make(chan struct{}),
	}
	if c.dir == "" {
		dir, err := os.MkdirTemp("", "holdfast-sandbox-"+opts.Name+"-")
		if err != nil {
			return nil, fmt.Errorf("creating working directory: %w", err)
		}
		c.dir, c.removeDir = dir, true
	} else if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating working directory: %w", err)
	}
	var err error
	if c.pki, err = newPKI(filepath.Join(c.dir, "pki")); err != nil {
		if c.removeDir {
			_ = os.RemoveAll(c.dir)
		}
		return nil, err
	}
	return c, nil
}

func (c *ControlPlane) start(ctx context.Context) error {
	if err := c.startEtcd(ctx); err != nil {
		return err
	}
	if err := c.startAPIServer(ctx, 0); err != nil {
		return err
	}
	var err error
	c.kubeconfig, err = kubeconfigFor(c.name, c.name, c.name+"-"+adminUser, c.host, c.pki.ca.keyPair.Cert, c.pki.admin)
	if err != nil {
		return err
	}
	if err := os.WriteFile(c.KubeconfigPath(), c.kubeconfig, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	if c.withKCM {
		if err := c.startControllerManager(ctx); err != nil {
			return err
		}
	}
	if c.nodes > 0 {
		if err := c.startScheduler(ctx); err != nil {
			return err
		}
		return c.startKwok(ctx)
	}
	return nil
}

// launch starts one of the binaries with its output routed per Options.Logs; env adds to or
// overrides the environment it inherits.
func (c *ControlPlane) launch(proc, binary string, args []string, env ...string) (*process, error) {
	out, err := openLog(c.logs, c.dir, c.name, proc)
	if err != nil {
		return nil, err
	}
	return startProcess(proc, filepath.Join(c.binaryDir, binary), args, out, env...)
}

func (c *ControlPlane) setProcess(slot **process, p *process) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*slot = p
}

// Name returns Options.Name.
func (c *ControlPlane) Name() string { return c.name }

// Host returns the API server's URL, https://127.0.0.1:<port>. It stays the same across
// StopAPIServer and StartAPIServer.
func (c *ControlPlane) Host() string { return c.host }

// Dir returns the working directory (certificates, etcd data, logs, kubeconfig).
func (c *ControlPlane) Dir() string { return c.dir }

// RESTConfig returns a fresh copy of the admin client configuration (a client certificate in
// group system:masters), so callers may change QPS, timeouts or user agent freely.
func (c *ControlPlane) RESTConfig() *rest.Config {
	return restConfigFor(c.host, c.pki.ca.keyPair.Cert, c.pki.admin)
}

// Kubeconfig returns the admin kubeconfig, with certificates inline and current-context set.
func (c *ControlPlane) Kubeconfig() []byte { return append([]byte(nil), c.kubeconfig...) }

// KubeconfigPath returns where the admin kubeconfig is written: <Dir>/kubeconfig.
func (c *ControlPlane) KubeconfigPath() string { return filepath.Join(c.dir, "kubeconfig") }

// KubeconfigForUser returns a kubeconfig authenticating as user in groups with a fresh client
// certificate signed by this cluster's CA. The user has no permissions until RBAC grants some.
func (c *ControlPlane) KubeconfigForUser(user string, groups ...string) ([]byte, error) {
	if user == "" {
		return nil, errors.New("kubeconfig for user: user name is required")
	}
	creds, err := c.pki.ca.newClientCert(user, groups)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig for user %q: %w", user, err)
	}
	contextName := c.name + "-" + user
	return kubeconfigFor(c.name, contextName, contextName, c.host, c.pki.ca.keyPair.Cert, creds)
}

// CACert returns the PEM certificate of the cluster's CA, which signs the serving and client
// certificates.
func (c *ControlPlane) CACert() []byte { return append([]byte(nil), c.pki.ca.keyPair.Cert...) }

// PIDs returns the process ids of the children that are still running.
func (c *ControlPlane) PIDs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var pids []int
	for _, p := range []*process{c.etcd, c.apiServer, c.controllerManager, c.scheduler, c.kwok} {
		if p != nil && !p.exited() {
			pids = append(pids, p.pid())
		}
	}
	return pids
}

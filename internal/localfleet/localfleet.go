package localfleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/config/crd"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/sandbox"
)

// DefaultNamespace is where the sandbox registers its Clusters.
const DefaultNamespace = "holdfast-system"

// Options describe the fleet to bring up.
type Options struct {
	// Clusters is the number of target clusters, named cluster-1 ... cluster-N.
	Clusters int
	// Dir receives hub.kubeconfig, <cluster>.kubeconfig and each control plane's working
	// directory. A temporary directory, removed on Stop, when empty.
	Dir string
	// Namespace of the Clusters on the hub; DefaultNamespace when empty.
	Namespace string
	// NoControllerManager skips kube-controller-manager on the targets (faster, less real).
	NoControllerManager bool
	// Nodes is the number of simulated nodes of each target (sandbox.Options.Nodes): with
	// kube-controller-manager, Deployments become Available as on a real cluster, and pods
	// annotated sandbox.SimulateFailureAnnotation crash-loop. 0, the default, runs no nodes:
	// pods stay Pending.
	Nodes int
	// Logs receives the control planes' output; files in each working directory when nil.
	Logs io.Writer
	// Agents leaves the targets unregistered, to be registered as Pull clusters and run by their
	// agents once the controller runs (StartAgents).
	Agents bool
}

// Fleet is a running local fleet.
type Fleet struct {
	Hub       *sandbox.ControlPlane
	Targets   []*sandbox.ControlPlane
	Dir       string
	Namespace string
	// Agents: the targets are Pull clusters (Options.Agents).
	Agents bool

	tempDir bool
	hub     client.Client
}

// TargetName is the name of the i-th target (1-based).
func TargetName(i int) string { return "cluster-" + strconv.Itoa(i) }

// TargetLabels are the labels the sample fleet's Clusters carry: every cluster is in fleet
// "sandbox"; odd clusters are env=dev, even ones env=prod, so selectors have something to choose.
func TargetLabels(i int) map[string]string {
	env := "prod"
	if i%2 == 1 {
		env = "dev"
	}
	return map[string]string{"fleet": "sandbox", "env": env, "holdfast.dev/cluster-name": TargetName(i)}
}

// Up starts the hub and the targets, installs the CRDs and registers the targets. On error,
// whatever was started is stopped again.
func Up(ctx context.Context, opts Options) (_ *Fleet, retErr error) {
	if opts.Clusters < 0 {
		return nil, fmt.Errorf("clusters must not be negative, got %d", opts.Clusters)
	}
	if opts.Nodes < 0 {
		return nil, fmt.Errorf("nodes must not be negative, got %d", opts.Nodes)
	}
	f := &Fleet{Dir: opts.Dir, Namespace: opts.Namespace, Agents: opts.Agents}
	if f.Namespace == "" {
		f.Namespace = DefaultNamespace
	}
	if f.Dir == "" {
		dir, err := os.MkdirTemp("", "holdfast-fleet-")
		if err != nil {
			return nil, fmt.Errorf("creating a temporary directory: %w", err)
		}
		f.Dir, f.tempDir = dir, true
	} else if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", f.Dir, err)
	}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, f.Stop())
		}
	}()

	planes := []sandbox.Options{{Name: "hub", Dir: filepath.Join(f.Dir, "hub"), Logs: opts.Logs}}
	for i := 1; i <= opts.Clusters; i++ {
		planes = append(planes, sandbox.Options{Name: TargetName(i), Dir: filepath.Join(f.Dir, TargetName(i)),
			ControllerManager: !opts.NoControllerManager, Nodes: opts.Nodes, Logs: opts.Logs})
	}
	started, err := sandbox.StartMany(ctx, planes)
	if err != nil {
		return nil, fmt.Errorf("starting control planes: %w", err)
	}
	f.Hub, f.Targets = started[0], started[1:]

	if err := InstallCRDs(ctx, f.Hub); err != nil {
		return nil, err
	}
	if err := os.WriteFile(f.HubKubeconfigPath(), f.Hub.Kubeconfig(), 0o600); err != nil {
		return nil, fmt.Errorf("writing the hub kubeconfig: %w", err)
	}
	scheme, err := controller.Scheme()
	if err != nil {
		return nil, err
	}
	f.hub, err = client.New(f.Hub.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("building the hub client: %w", err)
	}
	if f.Agents {
		// Where the Push Clusters would be: the platform's namespace, for its templates.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.Namespace}}
		if err := f.hub.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
			return nil, fmt.Errorf("creating namespace %s on the hub: %w", f.Namespace, err)
		}
	}
	for i, t := range f.Targets {
		if err := os.WriteFile(f.TargetKubeconfigPath(t.Name()), t.Kubeconfig(), 0o600); err != nil {
			return nil, fmt.Errorf("writing the kubeconfig of %s: %w", t.Name(), err)
		}
		if f.Agents {
			continue
		}
		if _, err := fleet.Register(ctx, f.hub, fleet.Registration{
			Namespace: f.Namespace, Name: t.Name(), Labels: TargetLabels(i + 1), Kubeconfig: t.Kubeconfig(),
		}); err != nil {
			return nil, fmt.Errorf("registering %s: %w", t.Name(), err)
		}
	}
	return f, nil
}

// InstallCRDs installs Holdfast's CRDs into a control plane and waits until they are served.
func InstallCRDs(ctx context.Context, cp *sandbox.ControlPlane) error {
	crds, err := crd.CRDs()
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(cp.RESTConfig(), envtest.CRDInstallOptions{CRDs: crds}); err != nil {
		return fmt.Errorf("installing Holdfast's CRDs into %s: %w", cp.Name(), err)
	}
	return nil
}

// HubClient is a client of the hub that knows Holdfast's types.
func (f *Fleet) HubClient() client.Client { return f.hub }

// HubKubeconfigPath is where the hub's admin kubeconfig was written.
func (f *Fleet) HubKubeconfigPath() string { return filepath.Join(f.Dir, "hub.kubeconfig") }

// TargetKubeconfigPath is where a target's admin kubeconfig was written.
func (f *Fleet) TargetKubeconfigPath(name string) string {
	return filepath.Join(f.Dir, name+".kubeconfig")
}

// Clusters lists the registered Clusters on the hub: those of Namespace, or the Pull clusters
// of the sample fleet, each in a namespace of its own.
func (f *Fleet) Clusters(ctx context.Context) ([]holdfastv1.Cluster, error) {
	list := &holdfastv1.ClusterList{}
	where := []client.ListOption{client.InNamespace(f.Namespace)}
	if f.Agents {
		where = []client.ListOption{client.MatchingLabels{"fleet": "sandbox"}}
	}
	if err := f.hub.List(ctx, list, where...); err != nil {
		return nil, fmt.Errorf("listing Clusters: %w", err)
	}
	return list.Items, nil
}

// Stop stops every control plane and removes what Up wrote. Safe to call twice.
func (f *Fleet) Stop() error {
	var errs []error
	for _, t := range f.Targets {
		errs = append(errs, t.Stop())
	}
	if f.Hub != nil {
		errs = append(errs, f.Hub.Stop())
	}
	if f.tempDir {
		errs = append(errs, os.RemoveAll(f.Dir))
	} else {
		errs = append(errs, removeIfExists(f.HubKubeconfigPath()))
		for _, t := range f.Targets {
			errs = append(errs, removeIfExists(f.TargetKubeconfigPath(t.Name())), os.RemoveAll(t.Dir()))
		}
		if f.Hub != nil {
			errs = append(errs, os.RemoveAll(f.Hub.Dir()))
		}
	}
	return errors.Join(errs...)
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

package localfleet

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/agent"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/onboard"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/version"
)

// A fleet of Pull clusters (Options.Agents) registers its targets once the controller runs, as
// `holdfast cluster add --pull` does (onboard.RegisterPull), each in its own namespace, and runs
// each target's agent in this process with that target's kubeconfig only: the hub holds none.

// StartAgents registers the targets as Pull clusters and runs their agents in the background,
// until the returned function stops them and waits for them to end. The controller must be
// running (it gives each agent its identity on the hub).
func (f *Fleet) StartAgents(ctx context.Context) (func() error, error) {
	if !f.Agents {
		return nil, errors.New("the fleet was not brought up with Options.Agents")
	}
	var stops []func() error
	stopAll := func() error {
		var errs []error
		for _, stop := range stops {
			errs = append(errs, stop())
		}
		return errors.Join(errs...)
	}
	for i, t := range f.Targets {
		stop, err := f.StartAgent(ctx, t, TargetLabels(i+1))
		if err != nil {
			return nil, errors.Join(err, stopAll())
		}
		stops = append(stops, stop)
	}
	return stopAll, nil
}

// StartAgent registers the control plane cp on the hub as the Pull cluster named after it, with
// labels, in its own namespace (onboard.PullNamespace), and runs its agent in the background
// with cp's kubeconfig only, until the returned function stops it and waits for it to end.
func (f *Fleet) StartAgent(ctx context.Context, cp *sandbox.ControlPlane, labels map[string]string) (func() error, error) {
	hubCS, err := kubernetes.NewForConfig(f.Hub.RESTConfig())
	if err != nil {
		return nil, fmt.Errorf("building the hub clientset: %w", err)
	}
	scheme, err := controller.Scheme()
	if err != nil {
		return nil, err
	}
	bootstrap, err := onboard.RegisterPull(ctx, f.hub, hubCS, f.Hub.RESTConfig(), onboard.PullOptions{Name: cp.Name(), Labels: labels})
	if err != nil {
		return nil, fmt.Errorf("registering %s in Pull mode: %w", cp.Name(), err)
	}
	own, err := client.New(cp.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	secret := types.NamespacedName{Namespace: onboard.Namespace, Name: onboard.AgentHubSecret}
	if err := agent.Bootstrap(ctx, own, secret, bootstrap); err != nil {
		return nil, err
	}
	o := agent.Options{Cluster: types.NamespacedName{Namespace: onboard.PullNamespace(cp.Name()), Name: cp.Name()},
		Own: cp.RESTConfig(), HubSecret: secret, Scheme: scheme, Version: version.Get().Version,
		// Several agents in one process.
		Controller: controller.Options{SkipNameValidation: true}}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- agent.Run(ctx, o) }()
	return func() error {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("the agent of %s: %w", cp.Name(), err)
		}
		return nil
	}, nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/agent"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/onboard"
	"holdfast.dev/holdfast/internal/sandbox"
)

const (
	clusterName, serviceSet = "edge", "bench-pull"
	templateNamespace       = "holdfast-system"
)

// statusName is the status object of the service set on edge.
var statusName = naming.StatusName(serviceSet, clusterName)

// pullFleet is the hub, the Pull cluster edge, the controller and edge's agent, all in this
// process but the control planes.
type pullFleet struct {
	hubPlane, edge *sandbox.ControlPlane
	hub            client.Client
	// edgeCS watches edge for this program, editCS edits there, idealCS is the ideal's own.
	edgeCS, editCS, idealCS kubernetes.Interface
	ns                      string
	cancel                  context.CancelFunc
	done                    chan error
}

// unlimited is cfg without client-side rate limiting.
func unlimited(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

func startPullFleet(ctx context.Context) (_ *pullFleet, err error) {
	if _, err := sandbox.BinaryDir(); err != nil {
		return nil, err
	}
	fmt.Fprintln(os.Stderr, "Starting a hub and the Pull cluster edge")
	planes, err := sandbox.StartMany(ctx, []sandbox.Options{{Name: "hub"}, {Name: clusterName}})
	if err != nil {
		return nil, fmt.Errorf("starting the control planes: %w", err)
	}
	f := &pullFleet{hubPlane: planes[0], edge: planes[1], ns: onboard.PullNamespace(clusterName), done: make(chan error, 2)}
	defer func() {
		if err != nil {
			err = errors.Join(err, f.stop())
		}
	}()
	if err := localfleet.InstallCRDs(ctx, f.hubPlane); err != nil {
		return nil, err
	}
	scheme, err := controller.Scheme()
	if err != nil {
		return nil, err
	}
	if f.hub, err = client.New(f.hubPlane.RESTConfig(), client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	for _, cs := range []*kubernetes.Interface{&f.edgeCS, &f.editCS, &f.idealCS} {
		if *cs, err = kubernetes.NewForConfig(unlimited(f.edge.RESTConfig())); err != nil {
			return nil, err
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	f.cancel = cancel
	mgr, _, err := controller.NewManager(runCtx, f.hubPlane.RESTConfig(), controller.Options{MetricsAddr: "0", HealthAddr: "0"})
	if err != nil {
		return nil, err
	}
	go func() { f.done <- mgr.Start(runCtx) }()

	hubCS, err := kubernetes.NewForConfig(f.hubPlane.RESTConfig())
	if err != nil {
		return nil, err
	}
	bootstrap, err := onboard.RegisterPull(ctx, f.hub, hubCS, f.hubPlane.RESTConfig(), onboard.PullOptions{Name: clusterName, Labels: map[string]string{"bench": "pull"}})
	if err != nil {
		return nil, err
	}
	own, err := client.New(f.edge.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	secret := types.NamespacedName{Namespace: onboard.Namespace, Name: onboard.AgentHubSecret}
	if err := agent.Bootstrap(ctx, own, secret, bootstrap); err != nil {
		return nil, err
	}
	go func() {
		f.done <- agent.Run(runCtx, agent.Options{Cluster: types.NamespacedName{Namespace: f.ns, Name: clusterName},
			Own: f.edge.RESTConfig(), HubSecret: secret, Scheme: scheme, Version: "bench"})
	}()
	return f, nil
}

// deploy creates the template and the service set of names, and waits until the status object
// is Ready with every object in sync.
func (f *pullFleet) deploy(ctx context.Context, names []string) error {
	if err := f.hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: templateNamespace}}); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("creating namespace %s: %w", templateNamespace, err)
	}
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s, labels: {%s: holdfast}}\ndata: {%s: %s}\n",
			n, pullNamespace, label, measure.ValueKey, measure.DeclaredValue(n))
	}
	if err := f.hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: serviceSet},
		Spec: holdfastv1.ServiceTemplateSpec{Inline: b.String()}}); err != nil {
		return fmt.Errorf("creating the template: %w", err)
	}
	mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: serviceSet},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"bench": "pull"}}},
			SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
			Services: []holdfastv1.Service{{Name: "app", Namespace: pullNamespace,
				Template: holdfastv1.TemplateReference{Namespace: templateNamespace, Name: serviceSet}}},
		}}
	measure.RaiseFightLimit(mcs)
	if err := f.hub.Create(ctx, mcs); err != nil {
		return fmt.Errorf("creating the service set: %w", err)
	}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		css := &holdfastv1.ClusterServiceStatus{}
		if err := f.hub.Get(ctx, f.statusKey(), css); err != nil {
			last = err.Error()
			return false, nil
		}
		last = measure.DescribeStatus(css)
		return conditions.IsTrue(css, holdfastv1.ReadyCondition) && int(css.Status.InSyncCount) == len(names), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the agent to deploy (%s): %w", last, err)
	}
	return nil
}

// drifts reads the status object's drift records and count from the hub.
func (f *pullFleet) drifts(ctx context.Context) ([]holdfastv1.DriftRecord, int64, error) {
	css := &holdfastv1.ClusterServiceStatus{}
	if err := f.hub.Get(ctx, f.statusKey(), css); err != nil {
		return nil, 0, err
	}
	return css.Status.Drifts, css.Status.DriftCount, nil
}

// stop ends the controller and the agent, and stops the control planes.
func (f *pullFleet) stop() error {
	var errs []error
	if f.cancel != nil {
		f.cancel()
		for range 2 {
			select {
			case err := <-f.done:
				if err != nil && !errors.Is(err, context.Canceled) {
					errs = append(errs, err)
				}
			case <-time.After(30 * time.Second):
				errs = append(errs, errors.New("the controller or the agent did not stop in 30s"))
			}
		}
	}
	for _, p := range []*sandbox.ControlPlane{f.hubPlane, f.edge} {
		if p != nil {
			errs = append(errs, p.Stop())
		}
	}
	return errors.Join(errs...)
}

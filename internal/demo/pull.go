package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/onboard"
	"holdfast.dev/holdfast/internal/sandbox"
)

// The Pull cluster of the demo: a control plane the hub holds no kubeconfig of, whose agent
// applies, corrects and records, also while the hub's API server is stopped.
const (
	pullCluster = "edge"
	pullSet     = "edge-hello"
	pullLabel   = "holdfast.dev/demo"
)

// pull shows a Pull cluster: edge is registered as `holdfast cluster add --pull` does and its
// agent runs here with edge's kubeconfig only; a service set is applied there by the agent;
// alice's edit is put back and recorded on the hub with her name; with the hub's API server
// stopped, her next edit is put back all the same, and its record reaches the hub once the API
// server is back.
func (o *Options) pull(ctx context.Context, out io.Writer, f *localfleet.Fleet) (retErr error) {
	start := time.Now()
	edge, err := sandbox.Start(ctx, sandbox.Options{Name: pullCluster, Dir: filepath.Join(f.Dir, pullCluster)})
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, edge.Stop()) }()
	stopAgent, err := f.StartAgent(ctx, edge, map[string]string{pullLabel: "pull"})
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, stopAgent()) }()
	hub, ns := f.HubClient(), onboard.PullNamespace(pullCluster)
	fmt.Fprintf(out, "%s started and registered in Pull mode (namespace %s on the hub, no kubeconfig there); its agent runs here with %s's kubeconfig only\n",
		pullCluster, ns, pullCluster)
	c := &holdfastv1.Cluster{}
	if err := o.poll(ctx, func(ctx context.Context) (bool, error) {
		err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: pullCluster}, c)
		return err == nil && conditions.IsTrue(c, holdfastv1.ReadyCondition), nil
	}); err != nil {
		return fmt.Errorf("waiting for Cluster %s/%s to be Ready: %w", ns, pullCluster, err)
	}
	fmt.Fprintf(out, "Cluster %s Ready %s after it started, through its agent's heartbeat: %s\n", pullCluster, since(start),
		conditions.Get(c, holdfastv1.ClusterConnectedCondition).Message)

	if err := hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: demoTemplateNamespace, Name: pullSet},
		Spec: holdfastv1.ServiceTemplateSpec{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello, namespace: edge-apps}\ndata: {greeting: hello}\n"}}); err != nil {
		return fmt.Errorf("creating ServiceTemplate %s: %w", pullSet, err)
	}
	if err := hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: pullSet},
		Spec: holdfastv1.MultiClusterServiceSpec{
			ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{pullLabel: "pull"}}},
			SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
			Drift:           &holdfastv1.DriftPolicy{Attribution: holdfastv1.AttributionAuto},
			Services: []holdfastv1.Service{{Name: "hello", Namespace: "edge-apps",
				Template: holdfastv1.TemplateReference{Namespace: demoTemplateNamespace, Name: pullSet}}},
		}}); err != nil {
		return fmt.Errorf("creating MultiClusterService %s: %w", pullSet, err)
	}
	start = time.Now()
	statusKey := client.ObjectKey{Namespace: ns, Name: naming.StatusName(pullSet, pullCluster)}
	css := &holdfastv1.ClusterServiceStatus{}
	if err := o.poll(ctx, func(ctx context.Context) (bool, error) {
		err := hub.Get(ctx, statusKey, css)
		return err == nil && conditions.IsTrue(css, holdfastv1.ReadyCondition) && conditions.IsTrue(css, holdfastv1.AttributionCondition), nil
	}); err != nil {
		return fmt.Errorf("waiting for %s to be Ready on %s: %w", pullSet, pullCluster, err)
	}
	fmt.Fprintf(out, "MultiClusterService %s: the hub rendered it and published the work; the agent applied ConfigMap edge-apps/hello and its attribution policy, Ready on the hub %s later\n",
		pullSet, since(start))

	cfg := rest.CopyConfig(edge.RESTConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", Groups: []string{"system:masters"}}
	alice, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
	if err != nil {
		return err
	}
	// The API server runs the attribution policy once it has loaded it, a moment after it was
	// applied: a dry run as alice shows when her stamp is there.
	if err := o.poll(ctx, func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{}
		if err := alice.Get(ctx, client.ObjectKey{Namespace: "edge-apps", Name: "hello"}, cm); err != nil {
			return false, nil
		}
		cm.Data["greeting"] = "dry-run"
		err := alice.Update(ctx, cm, client.DryRunAll, client.FieldOwner("probe"))
		return err == nil && cm.Annotations[holdfastv1.ChangedByAnnotation] == "alice", nil
	}); err != nil {
		return fmt.Errorf("waiting for %s's API server to load the attribution policy: %w", pullCluster, err)
	}
	if err := o.editPutBack(ctx, out, alice, "edited-by-alice", "with the hub up"); err != nil {
		return err
	}
	if err := o.recorded(ctx, out, hub, statusKey, "edited-by-alice", time.Now()); err != nil {
		return err
	}

	fmt.Fprintln(out, "The hub's API server is stopped")
	if err := f.Hub.StopAPIServer(); err != nil {
		return err
	}
	editErr := o.editPutBack(ctx, out, alice, "edited-while-the-hub-is-away", "with the hub away")
	if err := f.Hub.StartAPIServer(ctx); err != nil {
		return errors.Join(editErr, err)
	}
	if editErr != nil {
		return editErr
	}
	fmt.Fprintln(out, "The hub's API server is back")
	return o.recorded(ctx, out, hub, statusKey, "edited-while-the-hub-is-away", time.Now())
}

// editPutBack has alice edit the greeting on edge to value, as kubectl edit would, and waits
// until the agent puts it back.
func (o *Options) editPutBack(ctx context.Context, out io.Writer, alice client.Client, value, when string) error {
	key := client.ObjectKey{Namespace: "edge-apps", Name: "hello"}
	var edited time.Time
	if err := o.poll(ctx, func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{}
		if err := alice.Get(ctx, key, cm); err != nil {
			return false, nil
		}
		cm.Data["greeting"] = value
		err := alice.Update(ctx, cm, client.FieldOwner("kubectl-edit"))
		edited = time.Now()
		return err == nil, nil
	}); err != nil {
		return fmt.Errorf("editing ConfigMap %s on %s as alice: %w", key, pullCluster, err)
	}
	if err := o.poll(ctx, func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{}
		return alice.Get(ctx, key, cm) == nil && cm.Data["greeting"] == "hello", nil
	}); err != nil {
		return fmt.Errorf("waiting for the agent to put back ConfigMap %s: %w", key, err)
	}
	fmt.Fprintf(out, "alice set greeting=%s on %s (kubectl edit); the agent put it back %s later, %s\n", value, pullCluster, since(edited), when)
	return nil
}

// recorded waits until the status object on the hub records the drift to value, and prints it.
func (o *Options) recorded(ctx context.Context, out io.Writer, hub client.Client, key client.ObjectKey, value string, from time.Time) error {
	var rec *holdfastv1.DriftRecord
	if err := o.poll(ctx, func(ctx context.Context) (bool, error) {
		css := &holdfastv1.ClusterServiceStatus{}
		if err := hub.Get(ctx, key, css); err != nil {
			return false, nil
		}
		for i, d := range css.Status.Drifts {
			for _, fc := range d.Fields {
				if fc.New == fmt.Sprintf("%q", value) {
					rec = &css.Status.Drifts[i]
					return true, nil
				}
			}
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("waiting for the drift record of %s on the hub: %w", value, err)
	}
	fmt.Fprintf(out, "On the hub, %s later: %s %s/%s changed by %s (%s), %s\n", since(from), rec.Kind, rec.Namespace, rec.Name, rec.User, rec.Manager, rec.Resolution)
	return nil
}

// poll calls done until it reports true, within the demo's wait timeout.
func (o *Options) poll(ctx context.Context, done wait.ConditionWithContextFunc) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, o.WaitTimeout, true, done)
}

// pullPlatformNamespaces are the demo controller's platform namespaces beside its own: the Pull
// clusters' (controller.Options.PlatformNamespaces).
var pullPlatformNamespaces = []string{onboard.PullNamespace("*")}

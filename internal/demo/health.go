package demo

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/localfleet"
)

// clusterHealth stops one target's API server until its Cluster is reported Unreachable, starts
// it again, then breaks and repairs another target's kubeconfig Secret, one line per event.
func (o *Options) clusterHealth(ctx context.Context, out io.Writer, f *localfleet.Fleet) error {
	last := f.Targets[len(f.Targets)-1]
	key := client.ObjectKey{Namespace: f.Namespace, Name: last.Name()}
	start := time.Now()
	if err := last.StopAPIServer(); err != nil {
		return err
	}
	if err := waitConnected(ctx, f, key, metav1.ConditionFalse); err != nil {
		return err
	}
	fmt.Fprintf(out, "API server of %s stopped: %s after %s (grace %s)\n", last.Name(), connectedString(ctx, f, key), since(start), o.ConnectionGrace)
	start = time.Now()
	if err := last.StartAPIServer(ctx); err != nil {
		return err
	}
	if err := waitConnected(ctx, f, key, metav1.ConditionTrue); err != nil {
		return err
	}
	fmt.Fprintf(out, "API server of %s started again: %s after %s, with no restart of anything\n", last.Name(), connectedString(ctx, f, key), since(start))

	first := f.Targets[0]
	key = client.ObjectKey{Namespace: f.Namespace, Name: first.Name()}
	start = time.Now()
	if err := setKubeconfig(ctx, f, first.Name(), []byte("this is not a kubeconfig")); err != nil {
		return err
	}
	if err := waitConnected(ctx, f, key, metav1.ConditionFalse); err != nil {
		return err
	}
	fmt.Fprintf(out, "Secret %s replaced with garbage: %s after %s\n", fleet.KubeconfigSecretName(first.Name()), connectedString(ctx, f, key), since(start))
	start = time.Now()
	if err := setKubeconfig(ctx, f, first.Name(), first.Kubeconfig()); err != nil {
		return err
	}
	if err := f.WaitClustersReady(ctx, time.Minute); err != nil {
		return err
	}
	fmt.Fprintf(out, "Secret %s restored: every Cluster Ready again after %s\n", fleet.KubeconfigSecretName(first.Name()), since(start))
	return nil
}

// connectedString is the Cluster's Connected condition as "Connected=False (Reason: message)".
func connectedString(ctx context.Context, f *localfleet.Fleet, key client.ObjectKey) string {
	c := &holdfastv1.Cluster{}
	if err := f.HubClient().Get(ctx, key, c); err != nil {
		return fmt.Sprintf("Cluster unreadable: %v", err)
	}
	cond := conditions.Get(c, holdfastv1.ClusterConnectedCondition)
	if cond == nil {
		return "Connected unknown"
	}
	s := fmt.Sprintf("Connected=%s (%s", cond.Status, cond.Reason)
	if cond.Message != "" {
		s += ": " + fleetview.Truncate(cond.Message, 80)
	}
	return s + ")"
}

func setKubeconfig(ctx context.Context, f *localfleet.Fleet, cluster string, data []byte) error {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: f.Namespace, Name: fleet.KubeconfigSecretName(cluster)}
	if err := f.HubClient().Get(ctx, key, secret); err != nil {
		return fmt.Errorf("reading Secret %s: %w", key, err)
	}
	secret.Data[holdfastv1.DefaultKubeconfigKey] = data
	if err := f.HubClient().Update(ctx, secret); err != nil {
		return fmt.Errorf("updating Secret %s: %w", key, err)
	}
	return nil
}

// waitConnected waits until the Cluster's Connected condition has the given status.
func waitConnected(ctx context.Context, f *localfleet.Fleet, key client.ObjectKey, want metav1.ConditionStatus) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		c := &holdfastv1.Cluster{}
		if err := f.HubClient().Get(ctx, key, c); err != nil {
			return false, nil //nolint:nilerr // keep polling until the timeout
		}
		cond := conditions.Get(c, holdfastv1.ClusterConnectedCondition)
		return cond != nil && cond.Status == want, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Cluster %s to be Connected=%s: %w", key, want, err)
	}
	return nil
}

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/naming"
)

const (
	// namespace holds the Clusters and their status objects, as localfleet's.
	namespace = "holdfast-system"
	// templateNamespace is where the service sets' templates would be; none exists (no controller).
	templateNamespace = "templates"
	// setupWorkers create the objects concurrently.
	setupWorkers = 16
	// revision is every status object's spec.revision and status.revision.
	revision = "a1b2c3d4e5f6"
)

// Who drifts objects, as the API server records field managers.
var managers = []struct{ manager, operation, subresource string }{
	{"kubectl-edit", "Update", ""}, {"kubectl-client-side-apply", "Update", ""}, {"helm", "Update", ""},
	{"kubectl", "Update", "scale"}, {"argocd-controller", "Apply", ""}, {"", "", ""},
}

var (
	regions = []string{"eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-south-1"}
	// setNames are the first service sets' names; more are set-N.
	setNames = []string{"web", "payments", "observability"}
)

// clusterName is the i-th cluster's name (from 0).
func clusterName(i int) string { return fmt.Sprintf("cluster-%04d", i+1) }

// setName is the i-th service set's name (from 0).
func setName(i int) string {
	if i < len(setNames) {
		return setNames[i]
	}
	return fmt.Sprintf("set-%d", i+1)
}

// populate puts a fleet's data on the hub as the controller would have written it: the
// Clusters (Connected), the service sets (Ready) and one status object per cluster and set.
func populate(ctx context.Context, hub client.Client, cfg config) error {
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	now := time.Now()
	fmt.Fprintf(os.Stderr, "creating %d Clusters\n", cfg.clusters)
	if err := measure.Parallel(ctx, setupWorkers, cfg.clusters, func(ctx context.Context, i int) error {
		return createCluster(ctx, hub, i, now)
	}); err != nil {
		return err
	}
	sets := make([]*holdfastv1.MultiClusterService, cfg.sets)
	for s := range cfg.sets {
		mcs, err := createSet(ctx, hub, s, cfg.clusters, now)
		if err != nil {
			return err
		}
		sets[s] = mcs
	}
	fmt.Fprintf(os.Stderr, "creating %d ClusterServiceStatuses\n", cfg.clusters*cfg.sets)
	return measure.Parallel(ctx, setupWorkers, cfg.clusters*cfg.sets, func(ctx context.Context, k int) error {
		return createStatus(ctx, hub, sets[k%cfg.sets], k/cfg.sets, k%cfg.sets, now)
	})
}

func createCluster(ctx context.Context, hub client.Client, i int, now time.Time) error {
	env := "dev"
	if i%3 == 0 {
		env = "prod"
	}
	c := &holdfastv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: clusterName(i), Labels: map[string]string{
			"env": env, "region": regions[i%len(regions)], "team": fmt.Sprintf("team-%d", i%7),
		}},
		Spec: holdfastv1.ClusterSpec{KubeconfigSecretRef: holdfastv1.SecretKeyReference{Name: clusterName(i) + "-kubeconfig", Key: "value"}},
	}
	if err := hub.Create(ctx, c); err != nil {
		return fmt.Errorf("creating Cluster %s: %w", c.Name, err)
	}
	since := metav1.NewTime(now.Add(-72 * time.Hour))
	c.Status.ObservedGeneration = c.Generation
	c.Status.Conditions = []metav1.Condition{
		{Type: holdfastv1.ClusterConnectedCondition, Status: metav1.ConditionTrue, Reason: holdfastv1.ConnectedReason, Message: "Kubernetes v1.36.4", LastTransitionTime: since, ObservedGeneration: c.Generation},
		{Type: holdfastv1.ReadyCondition, Status: metav1.ConditionTrue, Reason: holdfastv1.ReadyReason, Message: "Connected", LastTransitionTime: since, ObservedGeneration: c.Generation},
	}
	if err := hub.Status().Update(ctx, c); err != nil {
		return fmt.Errorf("writing the status of Cluster %s: %w", c.Name, err)
	}
	return nil
}

func createSet(ctx context.Context, hub client.Client, s, clusters int, now time.Time) (*holdfastv1.MultiClusterService, error) {
	name := setName(s)
	mcs := &holdfastv1.MultiClusterService{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: holdfastv1.MultiClusterServiceSpec{Services: []holdfastv1.Service{
			{Name: name + "-config", Template: holdfastv1.TemplateReference{Namespace: templateNamespace, Name: name + "-config"}, Namespace: name},
			{Name: name + "-app", Template: holdfastv1.TemplateReference{Namespace: templateNamespace, Name: name + "-app"}, Namespace: name},
		}},
	}
	if err := hub.Create(ctx, mcs); err != nil {
		return nil, fmt.Errorf("creating MultiClusterService %s: %w", name, err)
	}
	mcs.Status.ObservedGeneration = mcs.Generation
	mcs.Status.MatchingClusters, mcs.Status.ReadyClusters, mcs.Status.HealthyClusters = int32(clusters), int32(clusters), int32(clusters)
	mcs.Status.Conditions = []metav1.Condition{{Type: holdfastv1.ReadyCondition, Status: metav1.ConditionTrue, Reason: holdfastv1.ClustersReadyReason,
		Message: fmt.Sprintf("%d of %d clusters Ready", clusters, clusters), LastTransitionTime: metav1.NewTime(now.Add(-time.Hour)), ObservedGeneration: mcs.Generation}}
	if err := hub.Status().Update(ctx, mcs); err != nil {
		return nil, fmt.Errorf("writing the status of MultiClusterService %s: %w", name, err)
	}
	return mcs, nil
}

// createStatus creates cluster i's status object of the set and writes its status through the
// status subresource, as the controller does.
func createStatus(ctx context.Context, hub client.Client, mcs *holdfastv1.MultiClusterService, i, s int, now time.Time) error {
	cluster := clusterName(i)
	css := &holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{
			Name: naming.StatusName(mcs.Name, cluster), Namespace: namespace,
			Labels: map[string]string{
				holdfastv1.MultiClusterServiceLabel: naming.LabelValue(mcs.Name),
				holdfastv1.ClusterLabel:             naming.LabelValue(cluster),
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: holdfastv1.GroupVersion.String(), Kind: "MultiClusterService",
				Name: mcs.Name, UID: mcs.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: holdfastv1.ClusterServiceStatusSpec{MultiClusterService: mcs.Name, Cluster: cluster, CleanupPolicy: holdfastv1.DeletionDelete, Revision: revision},
	}
	if err := hub.Create(ctx, css); err != nil {
		return fmt.Errorf("creating ClusterServiceStatus %s: %w", css.Name, err)
	}
	css.Status = statusOf(mcs, css.Generation, i, s, now)
	if err := hub.Status().Update(ctx, css); err != nil {
		return fmt.Errorf("writing the status of ClusterServiceStatus %s: %w", css.Name, err)
	}
	return nil
}

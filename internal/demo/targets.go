package demo

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview"
)

// managedObject is an object Holdfast put on a target, as read back from the target.
type managedObject struct {
	kind, namespace, name, owner, detail string
}

// printTargets reads the managed ConfigMaps and Deployments back from every target, with the
// ReplicaSets kube-controller-manager made for the Deployments.
func (d *serviceDemo) printTargets(ctx context.Context) error {
	fmt.Fprintln(d.out, "Objects labelled "+holdfastv1.ManagedByLabel+"="+holdfastv1.ManagedByValue+", read with each target's own kubeconfig.")
	if d.nodes > 0 {
		fmt.Fprintln(d.out, "ReplicaSets are made by the target's kube-controller-manager; kube-scheduler places their pods on simulated nodes, where kwok runs them.")
	} else {
		fmt.Fprintln(d.out, "ReplicaSets are made by the target's kube-controller-manager; the targets have no nodes (--nodes 0), so pods stay Pending.")
	}
	for i := range d.clusters {
		c := &d.clusters[i]
		objects, err := d.readTarget(ctx, c.Name)
		if err != nil {
			return err
		}
		fmt.Fprintf(d.out, "\n%s (%s)\n", c.Name, fleetview.LabelString(c.Labels))
		tw := tabwriter.NewWriter(d.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  KIND\tOBJECT\tSET/SERVICE\tCONTENT")
		for _, o := range objects {
			fmt.Fprintf(tw, "  %s\t%s/%s\t%s\t%s\n", o.kind, o.namespace, o.name, o.owner, o.detail)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func (d *serviceDemo) readTarget(ctx context.Context, cluster string) ([]managedObject, error) {
	c := d.targets[cluster]
	managed := client.MatchingLabels{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue}
	var objects []managedObject
	cms := &corev1.ConfigMapList{}
	if err := c.List(ctx, cms, managed); err != nil {
		return nil, fmt.Errorf("listing ConfigMaps on %s: %w", cluster, err)
	}
	for i := range cms.Items {
		cm := &cms.Items[i]
		objects = append(objects, managedObject{"ConfigMap", cm.Namespace, cm.Name, ownerOf(cm), dataString(cm.Data)})
	}
	deployments := &appsv1.DeploymentList{}
	if err := c.List(ctx, deployments, managed); err != nil {
		return nil, fmt.Errorf("listing Deployments on %s: %w", cluster, err)
	}
	for i := range deployments.Items {
		dep := &deployments.Items[i]
		rs, err := d.replicaSetOf(ctx, c, dep)
		if err != nil {
			return nil, fmt.Errorf("on %s: %w", cluster, err)
		}
		detail := fmt.Sprintf("replicas %d -> ReplicaSet %s, %s created", ptrOr(dep.Spec.Replicas, 1), rs.Name, plural(rs.Status.Replicas, "pod", "pods"))
		objects = append(objects, managedObject{"Deployment", dep.Namespace, dep.Name, ownerOf(dep), detail})
	}
	return objects, nil
}

// replicaSetOf waits for the ReplicaSet kube-controller-manager makes for a Deployment.
func (d *serviceDemo) replicaSetOf(ctx context.Context, c client.Client, dep *appsv1.Deployment) (*appsv1.ReplicaSet, error) {
	var found *appsv1.ReplicaSet
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list := &appsv1.ReplicaSetList{}
		if err := c.List(ctx, list, client.InNamespace(dep.Namespace)); err != nil {
			return false, nil //nolint:nilerr // keep polling until the timeout
		}
		for i := range list.Items {
			if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == dep.UID {
				found = &list.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the ReplicaSet of Deployment %s/%s: %w", dep.Namespace, dep.Name, err)
	}
	return found, nil
}

func ownerOf(o client.Object) string {
	l := o.GetLabels()
	return fleetview.OrDash(l[holdfastv1.OwnerLabel]) + "/" + fleetview.OrDash(l[holdfastv1.ServiceLabel])
}

func dataString(data map[string]string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, data[k]))
	}
	return strings.Join(parts, " ")
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

func plural(n int32, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

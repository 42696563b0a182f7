package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
)

// clusterIDIndex indexes Clusters by status.clusterID: the Clusters that reach one cluster.
const clusterIDIndex = ".status.clusterID"

func indexClusterID(o client.Object) []string {
	if id := o.(*holdfastv1.Cluster).Status.ClusterID; id != "" {
		return []string{id}
	}
	return nil
}

// findDuplicates finds the other Clusters that reach the same cluster: the cluster's identity
// as the connection read it, else as status recorded it (a cluster unreachable now is still
// the one it was).
func (r *Reconciler) findDuplicates(ctx context.Context, s *scope) error {
	if s.admission != nil {
		s.clusterID = s.admission.ClusterID
	}
	id := s.clusterID
	if id == "" {
		id = s.cluster.Status.ClusterID
	}
	if id == "" {
		return nil
	}
	list := &holdfastv1.ClusterList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{clusterIDIndex: id}); err != nil {
		return fmt.Errorf("listing the Clusters of cluster ID %s: %w", id, err)
	}
	for i := range list.Items {
		if o := &list.Items[i]; o.Namespace != s.cluster.Namespace || o.Name != s.cluster.Name {
			s.duplicates = append(s.duplicates, o.Namespace+"/"+o.Name)
		}
	}
	slices.Sort(s.duplicates)
	return nil
}

// setDuplicateRegistration says whether other Clusters reach the same cluster.
func setDuplicateRegistration(s *scope) {
	c := s.cluster
	set := func(status metav1.ConditionStatus, reason, msg string) {
		conditions.Set(c, metav1.Condition{Type: holdfastv1.DuplicateRegistrationCondition, Status: status, Reason: reason, Message: msg})
	}
	switch {
	case c.Status.ClusterID == "":
		set(metav1.ConditionUnknown, holdfastv1.ClusterIDUnknownReason,
			"the cluster's ID (the UID of its kube-system namespace) is read once it is connected; a kubeconfig whose identity may not get that namespace leaves it unknown, and registering the cluster twice undetected")
	case len(s.duplicates) > 0:
		set(metav1.ConditionTrue, holdfastv1.RegisteredTwiceReason, fmt.Sprintf(
			"the same cluster (ID %s) is registered also as Cluster %s: service sets that match both apply their objects from both; "+
				"objects the two declare differently are conflicts in both status objects, and neither rewrites them. Keep one registration (delete or pause the others)",
			c.Status.ClusterID, strings.Join(s.duplicates, ", ")))
	default:
		set(metav1.ConditionFalse, holdfastv1.RegisteredOnceReason, fmt.Sprintf("no other Cluster reaches this cluster (ID %s)", c.Status.ClusterID))
	}
}

// sameCluster maps a Cluster to the other Clusters with its clusterID, so that each says so
// when one appears, changes its ID or goes.
func (r *Reconciler) sameCluster(ctx context.Context, o client.Object) []reconcile.Request {
	id := o.(*holdfastv1.Cluster).Status.ClusterID
	if id == "" {
		return nil
	}
	list := &holdfastv1.ClusterList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{clusterIDIndex: id}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if k := client.ObjectKeyFromObject(&list.Items[i]); k != client.ObjectKeyFromObject(o) {
			out = append(out, reconcile.Request{NamespacedName: k})
		}
	}
	return out
}

// clusterIDChanged passes the events that change which Clusters share an ID: a Cluster created
// or deleted with one, or whose ID changed.
var clusterIDChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.(*holdfastv1.Cluster).Status.ClusterID != e.ObjectNew.(*holdfastv1.Cluster).Status.ClusterID
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}

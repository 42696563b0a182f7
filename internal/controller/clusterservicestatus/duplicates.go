package clusterservicestatus

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/fieldset"
	"holdfast.dev/holdfast/internal/naming"
)

// otherDeclaration is what another registration of the same cluster declares for an object.
type otherDeclaration struct {
	registration string
	status       types.NamespacedName
	digest       string
}

// contend returns apply's Contend callback for a status object whose Cluster reaches a cluster
// other Clusters reach too (its DuplicateRegistration condition is True): an object the same
// service set declares differently through another registration is a conflict, on both sides,
// which neither writes; one declared the same way is applied by both, which changes nothing.
// The other registrations' declarations are their status objects' inventories, read once per
// reconcile (scope.others), when the first object is asked about. nil when the cluster is
// registered once.
func (r *Reconciler) contend(ctx context.Context, s *scope) func(apply.Ref, string) (string, bool) {
	if !registeredTwice(s) {
		return nil
	}
	return func(ref apply.Ref, digest string) (string, bool) {
		// Read once per reconcile, whichever service asks first.
		s.othersOnce.Do(func() { s.others = r.otherDeclarations(ctx, s) })
		k := unversioned(ref)
		o, ok := s.others[k]
		if !ok || fieldset.SameDigest(o.digest, digest) {
			return "", true
		}
		if s.previous[driftRef(k)].State != holdfastv1.ResourceConflict {
			// A new conflict: the other side sees it once this status is recorded.
			s.noteContended(o.status)
		}
		return o.registration, false
	}
}

// registeredTwice reports whether the status object's Cluster reaches a cluster other Clusters
// reach too (its DuplicateRegistration condition is True).
func registeredTwice(s *scope) bool {
	return s.cluster != nil && s.mcs != nil && s.cluster.Status.ClusterID != "" &&
		conditions.IsTrue(s.cluster, holdfastv1.DuplicateRegistrationCondition)
}

// recheckOtherRegistrations asks the status objects of the service set on the other
// registrations of the cluster to compare, after this reconcile wrote objects there: what it
// declares is recorded now, and an object both declare differently is a conflict for them too.
// Applies of the two that raced (each before the other recorded anything) end so.
func (r *Reconciler) recheckOtherRegistrations(ctx context.Context, s *scope) {
	changed := 0
	for _, o := range s.services {
		if o.result != nil {
			changed += o.result.Changed
		}
	}
	if changed == 0 {
		return
	}
	for _, other := range r.otherRegistrations(ctx, s) {
		s.noteContended(client.ObjectKeyFromObject(other))
	}
}

// noteContended remembers a status object of another registration of the cluster that this
// reconcile found a new conflict with (recheckOthers). Apply calls it concurrently.
func (s *scope) noteContended(status types.NamespacedName) {
	s.contendedMu.Lock()
	defer s.contendedMu.Unlock()
	if s.contended == nil {
		s.contended = map[types.NamespacedName]bool{}
	}
	s.contended[status] = true
}

// otherRegistrations returns the status objects of the service set on the other Clusters with
// the cluster's clusterID; none when it is registered once.
func (r *Reconciler) otherRegistrations(ctx context.Context, s *scope) []*holdfastv1.ClusterServiceStatus {
	if !registeredTwice(s) {
		return nil
	}
	clusters := &holdfastv1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot list the Clusters that reach the same cluster; objects are applied as declared here")
		return nil
	}
	var out []*holdfastv1.ClusterServiceStatus
	for i := range clusters.Items {
		c := &clusters.Items[i]
		if c.Status.ClusterID != s.cluster.Status.ClusterID || (c.Namespace == s.cluster.Namespace && c.Name == s.cluster.Name) {
			continue
		}
		// Read whole: the hub cache holds status objects without their inventories.
		other := &holdfastv1.ClusterServiceStatus{}
		key := client.ObjectKey{Namespace: c.Namespace, Name: naming.StatusName(s.mcs.Name, c.Name)}
		if err := r.APIReader.Get(ctx, key, other); err == nil && statusOf(other, s.mcs.Name, client.ObjectKeyFromObject(c)) {
			out = append(out, other)
		}
	}
	return out
}

// otherDeclarations reads what the service set declares through the other Clusters with the same
// clusterID: the desired digests in their status objects' inventories.
func (r *Reconciler) otherDeclarations(ctx context.Context, s *scope) map[apply.Ref]otherDeclaration {
	log := ctrl.LoggerFrom(ctx)
	out := map[apply.Ref]otherDeclaration{}
	for _, other := range r.otherRegistrations(ctx, s) {
		key := client.ObjectKeyFromObject(other)
		entries, err := r.inventoryOfStatus(ctx, other)
		if err != nil {
			log.Error(err, "Cannot read the inventory of another registration of the cluster", "statusObject", key.String())
			continue
		}
		registration := fmt.Sprintf("Cluster %s/%s (the same cluster, registered twice)", other.Namespace, other.Spec.Cluster)
		for _, rs := range entries {
			if rs.Desired != "" {
				out[unversioned(toRef(rs.ResourceRef))] = otherDeclaration{registration: registration, status: key, digest: rs.Desired}
			}
		}
	}
	return out
}

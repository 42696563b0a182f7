package clusterservicestatus

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
)

// withdrawRemoved deletes (or, with UnmatchPolicy Leave, orphans) the objects of services that
// are no longer declared or are disabled. Adopted objects are never deleted: they are left in
// place without Holdfast's labels (see apply.Options.Adopt). It returns the entries still to be
// withdrawn.
func (r *Reconciler) withdrawRemoved(ctx context.Context, s *scope, applier *apply.Applier, previous []holdfastv1.ResourceStatus, declared map[string]bool) []holdfastv1.ResourceStatus {
	byService := map[string][]holdfastv1.ResourceStatus{}
	var order []string
	for _, rs := range previous {
		if declared[rs.Service] {
			continue
		}
		if _, ok := byService[rs.Service]; !ok {
			order = append(order, rs.Service)
		}
		byService[rs.Service] = append(byService[rs.Service], rs)
	}
	var left []holdfastv1.ResourceStatus
	for _, name := range order {
		prev := byService[name]
		if s.mcs.Spec.UnmatchPolicy == holdfastv1.UnmatchLeave && s.mcs.Spec.SyncMode != holdfastv1.SyncModeDryRun {
			ctrl.LoggerFrom(ctx).Info("Service removed; leaving its objects in place", "service", name, "objects", len(prev))
			continue
		}
		opts := r.applyOptions(ctx, s, holdfastv1.Service{Name: name}, prev)
		// Withdraw only what is still ours: another service set may have taken an object over
		// (for example while this one was being deleted), and its object must stay. Without an
		// owner annotation an object is deleted only if it still carries all of this service
		// set's labels (apply checks them) and was not adopted (apply lets those go).
		opts.Claim = func(live *unstructured.Unstructured) (string, bool) {
			owner := live.GetAnnotations()[holdfastv1.OwnerAnnotation]
			return owner, owner == "" || owner == s.mcs.Name
		}
		res, err := applier.Delete(ctx, opts.Previous, opts)
		if err != nil {
			s.withdrawErr = errors.Join(s.withdrawErr, fmt.Errorf("withdrawing service %q: %w", name, err))
			left = append(left, prev...)
			continue
		}
		left = append(left, resourcesFromResult(name, res, prev)...)
		if ferr := res.Err(); ferr != nil {
			s.withdrawErr = errors.Join(s.withdrawErr, fmt.Errorf("withdrawing service %q: %w", name, ferr))
		}
	}
	return left
}

// withdrawAll deletes everything in the inventory, for the deletion of the status object. It
// reports whether everything is gone.
func (r *Reconciler) withdrawAll(ctx context.Context, s *scope) (bool, error) {
	mcs := s.mcs
	if mcs == nil {
		// The MultiClusterService is gone; objects still carry its name.
		mcs = &holdfastv1.MultiClusterService{}
		mcs.Name = s.css.Spec.MultiClusterService
		s.mcs = mcs
	}
	applier, err := s.applier()
	if err != nil {
		return false, err
	}
	left := r.withdrawRemoved(ctx, s, applier, s.css.Status.Resources, map[string]bool{})
	s.resources = left
	if s.withdrawErr != nil {
		return false, s.withdrawErr
	}
	if len(inventoryOf(left, "")) > 0 {
		return false, fmt.Errorf("%d objects of ClusterServiceStatus %s not withdrawn yet", len(left), klog.KObj(s.css))
	}
	return true, nil
}

package multiclusterservice

import (
	"context"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/rollout"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingadmissionpolicies;mutatingadmissionpolicybindings,verbs=get

// approval is the approval the service set carries (holdfast.dev/rollout-approve), nil when
// none. One not handled yet is recorded with the user the hub's admission policy stamped, as
// verified only when that policy and its binding are in force on the hub (they are read then,
// once per approval); otherwise its approver is whatever the client wrote.
func (r *Reconciler) approval(ctx context.Context, mcs *holdfastv1.MultiClusterService) *rollout.Approval {
	value := mcs.Annotations[holdfastv1.RolloutApproveAnnotation]
	if value == "" {
		return nil
	}
	a := &rollout.Approval{Value: value, By: mcs.Annotations[holdfastv1.RolloutApprovedByAnnotation]}
	if ro := mcs.Status.Rollout; ro != nil && ro.LastHandledApprove == value {
		return a // handled: the plan ignores it
	}
	a.Verified = r.approvalPolicyInForce(ctx)
	return a
}

// approvalPolicyInForce reports whether the hub has the admission policy that stamps approvers,
// and its binding.
func (r *Reconciler) approvalPolicyInForce(ctx context.Context) bool {
	if r.APIReader == nil {
		return false
	}
	key := client.ObjectKey{Name: holdfastv1.ApprovalPolicyName}
	policy := &admissionv1.MutatingAdmissionPolicy{}
	binding := &admissionv1.MutatingAdmissionPolicyBinding{}
	return r.APIReader.Get(ctx, key, policy) == nil && r.APIReader.Get(ctx, key, binding) == nil &&
		binding.Spec.PolicyName == holdfastv1.ApprovalPolicyName && policy.DeletionTimestamp.IsZero()
}

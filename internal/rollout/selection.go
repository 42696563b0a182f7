package rollout

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/tenancy"
)

// Membership is how a service set with a rollout selects a cluster.
type Membership int

const (
	// Selected: its cluster selector selects the cluster, and the one in force too.
	Selected Membership = iota
	// Joining: only its cluster selector does, a change that takes effect when the rollout goes
	// ahead (at once, or once approved).
	Joining
	// Leaving: only the selector in force does.
	Leaving
	// NotSelected: neither does.
	NotSelected
)

// Selection chooses a service set's clusters, by its cluster selector and, when its rollout
// records another one in force (status.rollout.clusterSelector: a changed selector is a new
// revision, held like any other until approved), by that one too. The MultiClusterService
// controller makes status objects for both; the ClusterServiceStatus controller deploys
// through them, and previews a leaving cluster's withdrawal.
type Selection struct {
	policy   tenancy.Policy
	mcs      *holdfastv1.MultiClusterService
	declared labels.Selector
	inForce  *holdfastv1.ClusterSelector
	previous labels.Selector
}

// NewSelection is the selection of mcs under policy, or an error naming the selector that
// cannot be used.
func NewSelection(policy tenancy.Policy, mcs *holdfastv1.MultiClusterService) (*Selection, error) {
	declared, err := metav1.LabelSelectorAsSelector(&mcs.Spec.ClusterSelector.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("spec.clusterSelector is not a valid label selector: %w", err)
	}
	s := &Selection{policy: policy, mcs: mcs, declared: declared}
	ro := mcs.Status.Rollout
	if mcs.Spec.Rollout == nil || ro == nil || ro.ClusterSelector == nil || equality.Semantic.DeepEqual(*ro.ClusterSelector, mcs.Spec.ClusterSelector) {
		return s, nil
	}
	previous, err := metav1.LabelSelectorAsSelector(&ro.ClusterSelector.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("status.rollout.clusterSelector is not a valid label selector: %w", err)
	}
	s.inForce, s.previous = ro.ClusterSelector, previous
	return s, nil
}

// Of is how the selection selects c.
func (s *Selection) Of(c *holdfastv1.Cluster) Membership {
	declared := s.policy.Selects(s.mcs, s.declared, c)
	if s.inForce == nil {
		if declared {
			return Selected
		}
		return NotSelected
	}
	inForce := s.policy.SelectsBy(s.mcs, s.inForce.Namespaces, s.previous, c)
	switch {
	case declared && inForce:
		return Selected
	case declared:
		return Joining
	case inForce:
		return Leaving
	}
	return NotSelected
}

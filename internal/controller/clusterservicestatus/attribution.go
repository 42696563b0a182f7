package clusterservicestatus

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/attribution"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/render"
)

// attributionState is what a reconcile learnt of drift attribution on its cluster (package
// attribution); nil when the reconcile did not look (the condition stays as it was).
type attributionState struct {
	// auto: the service set asks for attribution (drift.attribution Auto).
	auto bool
	// unsupported: the cluster does not serve MutatingAdmissionPolicy.
	unsupported bool
	// pending says why the policy cannot be built yet (Holdfast's identity unknown): its
	// objects are kept as they are, as on a render error.
	pending *problem
	// service is the policy and binding, applied as a service of their own.
	service renderedService
}

// attributionOf resolves the service set's attribution policy.
func attributionOf(mcs *holdfastv1.MultiClusterService) holdfastv1.AttributionMode {
	if mcs.Spec.Drift == nil || mcs.Spec.Drift.Attribution == "" {
		return holdfastv1.AttributionOff
	}
	return mcs.Spec.Drift.Attribution
}

// loadAttribution decides, once per reconcile, what the service set's attribution needs on the
// cluster: nothing (Off, or a cluster without MutatingAdmissionPolicy, where drift names the
// field manager only), or the policy and binding, excluding every identity Holdfast writes as
// there: its connection's (learnt with a SelfSubjectReview, fleet.Connection.Identity) and the
// ServiceAccount it acts as for this set, if any (identity.go).
func (r *Reconciler) loadAttribution(ctx context.Context, s *scope) {
	st := &attributionState{auto: attributionOf(s.mcs) == holdfastv1.AttributionAuto}
	s.attribution = st
	if !st.auto {
		return
	}
	st.service = renderedService{svc: holdfastv1.Service{Name: attribution.Service}}
	id, err := s.conn.Identity(ctx)
	if err != nil {
		st.pending = &problem{holdfastv1.AttributionPendingReason, err.Error()}
		st.service.err, st.service.transient = st.pending, true
		return
	}
	if !id.MutatingAdmissionPolicies {
		st.unsupported = true
		return
	}
	users := []string{id.UserName}
	if sa := s.mcs.Spec.ServiceAccount; sa != nil {
		users = append(users, fleet.ServiceAccount{Namespace: sa.Namespace, Name: sa.Name}.UserName())
	}
	objs, err := attribution.Objects(s.mcs.Name, users)
	if err == nil {
		st.service.digest, err = render.Digest(objs)
	}
	if err != nil {
		st.pending = &problem{holdfastv1.AttributionPendingReason, err.Error()}
		st.service.err = st.pending
		return
	}
	st.service.objects, st.service.count = objs, len(objs)
}

// withAttribution adds the attribution service to the rendered services when the cluster needs
// it. With only set, it holds only those of its objects (as remembered declarations do), and
// marks them in found.
func (s *scope) withAttribution(rendered []renderedService, only, found map[apply.Ref]bool) []renderedService {
	st := s.attribution
	if st == nil || !st.auto || st.unsupported {
		return rendered
	}
	rs := st.service
	if only != nil {
		rs.objects = nil
		for _, o := range st.service.objects {
			if ref := apply.RefOf(o); only[unversioned(ref)] && !found[unversioned(ref)] {
				rs.objects, found[unversioned(ref)] = append(rs.objects, o), true
			}
		}
	}
	return append(rendered, rs)
}

// setAttribution sets the Attribution condition while the service set asks for attribution, and
// removes it otherwise. A reconcile that did not look leaves it as it was.
func setAttribution(s *scope) {
	st := s.attribution
	if s.mcs == nil || attributionOf(s.mcs) != holdfastv1.AttributionAuto {
		meta.RemoveStatusCondition(&s.css.Status.Conditions, holdfastv1.AttributionCondition)
		return
	}
	if st == nil || !s.deployed {
		keepOrUnknown(s, holdfastv1.AttributionCondition, "attribution policy not applied yet")
		return
	}
	switch {
	case st.unsupported:
		set(s, holdfastv1.AttributionCondition, metav1.ConditionFalse, holdfastv1.AttributionUnsupportedReason,
			"the cluster does not serve admissionregistration.k8s.io/v1 mutatingadmissionpolicies (Kubernetes 1.36 or later): drift names the field manager only")
	case st.pending != nil:
		set(s, holdfastv1.AttributionCondition, metav1.ConditionUnknown, holdfastv1.AttributionPendingReason, st.pending.message)
	default:
		for _, o := range s.services {
			if o.name != attribution.Service {
				continue
			}
			if o.result == nil {
				set(s, holdfastv1.AttributionCondition, metav1.ConditionUnknown, holdfastv1.AttributionPendingReason,
					"attribution policy not applied: "+firstNonEmpty(errString(o.applyErr), "waiting"))
			} else if ready, _, why := serviceReadiness(s, o); ready != metav1.ConditionTrue {
				set(s, holdfastv1.AttributionCondition, metav1.ConditionUnknown, holdfastv1.AttributionPendingReason,
					"attribution policy not applied: "+why)
			} else {
				set(s, holdfastv1.AttributionCondition, metav1.ConditionTrue, holdfastv1.AttributionActiveReason,
					fmt.Sprintf("MutatingAdmissionPolicy %s stamps who updates the service set's objects", attribution.Name(s.mcs.Name)))
			}
			return
		}
		keepOrUnknown(s, holdfastv1.AttributionCondition, "attribution policy not applied yet")
	}
}

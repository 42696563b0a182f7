package clusterservicestatus

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/admission"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/render"
)

// admissionKind is one of the admission policies a service set may ask of its targets (package
// admission): what it needs, how it is applied and what its condition says.
type admissionKind struct {
	// service is the name its objects are applied as.
	service string
	// condition and its reasons.
	condition, active, unsupported, pending string
	// wanted reports whether the service set asks for it.
	wanted func(mcs *holdfastv1.MultiClusterService) bool
	// served reports whether the target serves the API it needs.
	served func(id fleet.Identity) bool
	// unsupportedMessage says what the target lacks and what happens instead.
	unsupportedMessage string
	// activeMessage says what the applied policy does.
	activeMessage func(mcs *holdfastv1.MultiClusterService) string
	// objects builds its objects, excluding Holdfast's own user names on the target.
	objects func(mcs *holdfastv1.MultiClusterService, in admissionInputs) ([]*unstructured.Unstructured, error)
}

// admissionInputs are what the policies need beside the service set.
type admissionInputs struct {
	// holdfast are Holdfast's own user names on the target.
	holdfast []string
	// breakGlass are the platform's break-glass users and groups (Reconciler.BreakGlass).
	breakGlass holdfastv1.BreakGlass
}

// admissionKinds are attribution and prevention, in the order their objects are applied.
var admissionKinds = []admissionKind{{
	service:   admission.AttributionService,
	condition: holdfastv1.AttributionCondition, active: holdfastv1.AttributionActiveReason,
	unsupported: holdfastv1.AttributionUnsupportedReason, pending: holdfastv1.AttributionPendingReason,
	wanted: func(mcs *holdfastv1.MultiClusterService) bool {
		return attributionOf(mcs) == holdfastv1.AttributionAuto
	},
	served:             func(id fleet.Identity) bool { return id.MutatingAdmissionPolicies },
	unsupportedMessage: "the cluster does not serve " + fleet.AdmissionGroupVersion + " " + fleet.MutatingPolicyAPI.String() + ": drift names the field manager only",
	activeMessage: func(mcs *holdfastv1.MultiClusterService) string {
		return fmt.Sprintf("MutatingAdmissionPolicy %s stamps who updates the service set's objects", admission.AttributionName(mcs.Name))
	},
	objects: func(mcs *holdfastv1.MultiClusterService, in admissionInputs) ([]*unstructured.Unstructured, error) {
		return admission.AttributionObjects(mcs.Name, in.holdfast)
	},
}, {
	service:   admission.PreventionService,
	condition: holdfastv1.PreventionCondition, active: holdfastv1.PreventionActiveReason,
	unsupported: holdfastv1.PreventionUnsupportedReason, pending: holdfastv1.PreventionPendingReason,
	wanted: func(mcs *holdfastv1.MultiClusterService) bool {
		return len(preventionOf(mcs, admissionInputs{}).Services) > 0
	},
	served:             func(id fleet.Identity) bool { return id.ValidatingAdmissionPolicies },
	unsupportedMessage: "the cluster does not serve " + fleet.AdmissionGroupVersion + " " + fleet.ValidatingPolicyAPI.String() + ": changes are not stopped, drift is handled as without prevention",
	activeMessage:      preventionMessage,
	objects: func(mcs *holdfastv1.MultiClusterService, in admissionInputs) ([]*unstructured.Unstructured, error) {
		return admission.PreventionObjects(preventionOf(mcs, in))
	},
}}

// admissionState is what a reconcile learnt of one admission policy on its cluster.
type admissionState struct {
	kind *admissionKind
	// unsupported: the cluster does not serve the API.
	unsupported bool
	// pending says why the objects cannot be built yet (Holdfast's identity unknown): they are
	// kept as they are, as on a render error.
	pending *problem
	// service is the policy's objects, applied as a service of their own.
	service renderedService
}

// attributionOf resolves the service set's attribution policy.
func attributionOf(mcs *holdfastv1.MultiClusterService) holdfastv1.AttributionMode {
	if mcs.Spec.Drift == nil || mcs.Spec.Drift.Attribution == "" {
		return holdfastv1.AttributionOff
	}
	return mcs.Spec.Drift.Attribution
}

// preventionOf resolves the service set's prevention: each deployed service whose drift policy
// (drift.PolicyFor: the set's, the service's override, Off when it opted out) is Warn or Deny;
// break-glass are the set's users and groups and the platform's.
func preventionOf(mcs *holdfastv1.MultiClusterService, in admissionInputs) admission.Prevention {
	p := admission.Prevention{ServiceSet: mcs.Name, Holdfast: in.holdfast, BreakGlass: holdfastv1.BreakGlass{
		Users:  append([]string(nil), in.breakGlass.Users...),
		Groups: append([]string(nil), in.breakGlass.Groups...),
	}}
	if d := mcs.Spec.Drift; d != nil && d.BreakGlass != nil {
		p.BreakGlass.Users = append(p.BreakGlass.Users, d.BreakGlass.Users...)
		p.BreakGlass.Groups = append(p.BreakGlass.Groups, d.BreakGlass.Groups...)
	}
	for _, svc := range mcs.Spec.Services {
		if svc.Disabled {
			continue
		}
		pol := drift.PolicyFor(mcs, svc)
		if pol.Prevention == holdfastv1.PreventionWarn || pol.Prevention == holdfastv1.PreventionDeny {
			p.Services = append(p.Services, admission.PreventedService{Name: svc.Name, Mode: pol.Prevention, Ignore: pol.IgnoreRules()})
		}
	}
	return p
}

// preventionMessage names the policies in force and the services each covers.
func preventionMessage(mcs *holdfastv1.MultiClusterService) string {
	byMode := map[holdfastv1.PreventionMode][]string{}
	for _, s := range preventionOf(mcs, admissionInputs{}).Services {
		byMode[s.Mode] = append(byMode[s.Mode], s.Name)
	}
	msg := "ValidatingAdmissionPolicy"
	sep := " "
	for _, mode := range []holdfastv1.PreventionMode{holdfastv1.PreventionDeny, holdfastv1.PreventionWarn} {
		if names := byMode[mode]; len(names) > 0 {
			msg += fmt.Sprintf("%s%s (%s: %v)", sep, admission.PreventionName(mcs.Name, mode), mode, names)
			sep = ", "
		}
	}
	return msg + " covers the service set's objects"
}

// loadAdmission decides, once per reconcile, what the service set's admission policies need on
// the cluster: nothing (not asked for, or a cluster without the API, where drift is handled as
// without them), or their objects, excluding every identity Holdfast writes as there: its
// connection's (learnt with a SelfSubjectReview, fleet.Connection.Identity) and the
// ServiceAccount it acts as for this set, if any (identity.go).
func (r *Reconciler) loadAdmission(ctx context.Context, s *scope) {
	s.admission = nil
	var id *fleet.Identity
	var idErr error
	for i := range admissionKinds {
		k := &admissionKinds[i]
		if !k.wanted(s.mcs) {
			continue
		}
		st := &admissionState{kind: k, service: renderedService{svc: holdfastv1.Service{Name: k.service}}}
		s.admission = append(s.admission, st)
		if id == nil && idErr == nil {
			var got fleet.Identity
			if got, idErr = s.conn.Identity(ctx); idErr == nil {
				id = &got
			}
		}
		if idErr != nil {
			st.pending = &problem{k.pending, apply.Describe(idErr)}
			st.service.err, st.service.transient = st.pending, true
			continue
		}
		if !k.served(*id) {
			st.unsupported = true
			continue
		}
		users := []string{id.UserName}
		if sa := s.mcs.Spec.ServiceAccount; sa != nil {
			users = append(users, fleet.ServiceAccount{Namespace: sa.Namespace, Name: sa.Name}.UserName())
		}
		objs, err := k.objects(s.mcs, admissionInputs{holdfast: users, breakGlass: r.BreakGlass})
		if err == nil {
			st.service.digest, err = render.Digest(objs)
		}
		if err != nil {
			st.pending = &problem{k.pending, err.Error()}
			st.service.err = st.pending
			continue
		}
		st.service.objects, st.service.count = objs, len(objs)
	}
	if s.admission == nil {
		s.admission = []*admissionState{}
	}
}

// attributionInForce reports whether Holdfast's attribution policy stamps the updates of obj
// on css's cluster, so that its stamp can be trusted (drift.Verdict.TrustStamp): css says the
// policy is active there (Attribution True, AttributionActive), and obj carries the labels the
// policy selects. Anywhere else the stamp annotations are whatever someone wrote into them.
func attributionInForce(css *holdfastv1.ClusterServiceStatus, obj metav1.Object) bool {
	c := meta.FindStatusCondition(css.Status.Conditions, holdfastv1.AttributionCondition)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == holdfastv1.AttributionActiveReason &&
		admission.AttributionCovers(css.Spec.MultiClusterService, obj.GetLabels())
}

// applied reports whether the policy's objects go to the cluster.
func (st *admissionState) applied() bool { return !st.unsupported }

// admissionNotAsDeployed reports whether an admission policy's objects cannot be taken as they
// were deployed: not built, or (asDeployed) not the revision the status records.
func (s *scope) admissionNotAsDeployed(asDeployed bool) bool {
	for _, st := range s.admission {
		if st.applied() && (st.service.err != nil || (asDeployed && st.service.digest != ServiceRevision(s.css, st.kind.service))) {
			return true
		}
	}
	return false
}

// withAdmission adds the admission policies' services to the rendered services where the
// cluster needs them. With only set, each holds only those of its objects (as remembered
// declarations do), and marks them in found.
func (s *scope) withAdmission(rendered []renderedService, only, found map[apply.Ref]bool) []renderedService {
	for _, st := range s.admission {
		if !st.applied() {
			continue
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
		rendered = append(rendered, rs)
	}
	return rendered
}

// setAdmissionConditions sets each admission policy's condition while the service set asks for
// it, and removes it otherwise. A reconcile that did not look leaves them as they were.
func setAdmissionConditions(s *scope) {
	for i := range admissionKinds {
		setAdmissionCondition(s, &admissionKinds[i])
	}
}

func setAdmissionCondition(s *scope, k *admissionKind) {
	if s.mcs == nil || !k.wanted(s.mcs) {
		meta.RemoveStatusCondition(&s.css.Status.Conditions, k.condition)
		return
	}
	var st *admissionState
	for _, a := range s.admission {
		if a.kind.service == k.service {
			st = a
		}
	}
	notYet := "policy not applied yet"
	if st == nil || !s.deployed {
		keepOrUnknown(s, k.condition, notYet)
		return
	}
	switch {
	case st.unsupported:
		set(s, k.condition, metav1.ConditionFalse, k.unsupported, k.unsupportedMessage)
	case st.pending != nil:
		set(s, k.condition, metav1.ConditionUnknown, k.pending, st.pending.message)
	default:
		for _, o := range s.services {
			if o.name != k.service {
				continue
			}
			if o.result == nil && o.applyErr == nil {
				// Not applied in this reconcile (only drift was corrected, or it waits behind
				// other services): as it was. A stamp is trusted while the condition says the
				// policy is active (attributionInForce), so it must not flap.
				keepOrUnknown(s, k.condition, notYet)
			} else if o.result == nil {
				set(s, k.condition, metav1.ConditionUnknown, k.pending, "policy not applied: "+errString(o.applyErr))
			} else if ready, _, why := serviceReadiness(s, o); ready != metav1.ConditionTrue {
				set(s, k.condition, metav1.ConditionUnknown, k.pending, "policy not applied: "+why)
			} else {
				set(s, k.condition, metav1.ConditionTrue, k.active, k.activeMessage(s.mcs))
			}
			return
		}
		keepOrUnknown(s, k.condition, notYet)
	}
}

package admission

import (
	"fmt"
	"strconv"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// AttributionService is the name of the service the attribution objects are applied as, in the
// service set's status and on the objects' holdfast.dev/service label. It has a dot, which a
// declared service's name may not, so it never collides with one.
const AttributionService = "holdfast.attribution"

// attributionPrefix starts the names of a service set's attribution policy and binding.
const attributionPrefix = "holdfast-attribution-"

// AttributionName is the name of the policy and of its binding for a service set: bounded (the
// set's name is shortened with a hash as a label value is, naming.LabelValue), and one per
// service set.
func AttributionName(serviceSet string) string {
	return attributionPrefix + naming.LabelValue(serviceSet)
}

// AttributionObjects returns the policy and its binding for serviceSet, stamping every update of its
// objects except those made by the user names in holdfast (Holdfast's own identities on the
// target: its connection's, and the ServiceAccount it acts as for the set, if any).
func AttributionObjects(serviceSet string, holdfast []string) ([]*unstructured.Unstructured, error) {
	if celList(holdfast) == "[]" {
		return nil, fmt.Errorf("attribution policy of service set %s: Holdfast's own user name on the cluster is not known", serviceSet)
	}
	name := AttributionName(serviceSet)
	policy := &admissionv1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionv1.MatchResources{
				ResourceRules:  mainResources(admissionv1.Update),
				ObjectSelector: ownedBy(serviceSet),
				MatchPolicy:    ptr.To(admissionv1.Equivalent),
			},
			MatchConditions: []admissionv1.MatchCondition{{
				Name:       "not-holdfast",
				Expression: "!(request.userInfo.username in " + celList(holdfast) + ")",
			}},
			Mutations: []admissionv1.Mutation{{
				PatchType:          admissionv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionv1.ApplyConfiguration{Expression: stamp},
			}},
			FailurePolicy:      ptr.To(admissionv1.Ignore),
			ReinvocationPolicy: admissionv1.NeverReinvocationPolicy,
		},
	}
	binding := &admissionv1.MutatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "MutatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       admissionv1.MutatingAdmissionPolicyBindingSpec{PolicyName: name},
	}
	objs, err := toUnstructured(policy, binding)
	if err != nil {
		return nil, fmt.Errorf("attribution policy of service set %s: %w", serviceSet, err)
	}
	return objs, nil
}

// AttributionCovers reports whether the attribution policy of serviceSet stamps the updates of
// an object with these labels: the same selector the policy matches with.
func AttributionCovers(serviceSet string, objLabels map[string]string) bool {
	sel, err := metav1.LabelSelectorAsSelector(ownedBy(serviceSet))
	return err == nil && sel.Matches(labels.Set(objLabels))
}

// stamp is the mutation: the requester's user name, and the latest managedFields time, which
// the API server set on the requester's entry for this very update before admission ran.
var stamp = `Object{metadata: Object.metadata{annotations: {` +
	strconv.Quote(holdfastv1.ChangedByAnnotation) + `: request.userInfo.username, ` +
	strconv.Quote(holdfastv1.ChangedAtAnnotation) + `: ` +
	`has(object.metadata.managedFields) && object.metadata.managedFields.exists(e, has(e.time)) ? ` +
	`object.metadata.managedFields.filter(e, has(e.time)).map(e, string(e.time)).max() : ""}}}`

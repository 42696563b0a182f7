package attribution

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// Service is the name of the service the attribution objects are applied as, in the service
// set's status and on the objects' holdfast.dev/service label. It has a dot, which a declared
// service's name may not, so it never collides with one.
const Service = "holdfast.attribution"

// namePrefix starts the names of a service set's policy and binding.
const namePrefix = "holdfast-attribution-"

// Name is the name of the policy and of its binding for a service set: bounded (the set's name
// is shortened with a hash as a label value is, naming.LabelValue), and one per service set.
func Name(serviceSet string) string { return namePrefix + naming.LabelValue(serviceSet) }

// Objects returns the policy and its binding for serviceSet, stamping every update of its
// objects except those made by the user names in holdfast (Holdfast's own identities on the
// target: its connection's, and the ServiceAccount it acts as for the set, if any).
func Objects(serviceSet string, holdfast []string) ([]*unstructured.Unstructured, error) {
	if celList(holdfast) == "[]" {
		return nil, fmt.Errorf("attribution policy of service set %s: Holdfast's own user name on the cluster is not known", serviceSet)
	}
	name := Name(serviceSet)
	policy := &admissionv1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionv1.MatchResources{
				// "*" matches every resource and no subresource (status, scale).
				ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
				}}},
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
					holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue,
					holdfastv1.OwnerLabel:     naming.LabelValue(serviceSet),
				}},
				MatchPolicy: ptr.To(admissionv1.Equivalent),
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
	var out []*unstructured.Unstructured
	for _, o := range []runtime.Object{policy, binding} {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, fmt.Errorf("attribution policy of service set %s: %w", serviceSet, err)
		}
		u := &unstructured.Unstructured{Object: m}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "status")
		out = append(out, u)
	}
	return out, nil
}

// stamp is the mutation: the requester's user name, and the latest managedFields time, which
// the API server set on the requester's entry for this very update before admission ran.
var stamp = `Object{metadata: Object.metadata{annotations: {` +
	strconv.Quote(holdfastv1.ChangedByAnnotation) + `: request.userInfo.username, ` +
	strconv.Quote(holdfastv1.ChangedAtAnnotation) + `: ` +
	`has(object.metadata.managedFields) && object.metadata.managedFields.exists(e, has(e.time)) ? ` +
	`object.metadata.managedFields.filter(e, has(e.time)).map(e, string(e.time)).max() : ""}}}`

// celList is a CEL list literal of the strings, sorted and without repeats.
func celList(items []string) string {
	seen := map[string]bool{}
	var quoted []string
	for _, it := range items {
		if it != "" && !seen[it] {
			seen[it] = true
			quoted = append(quoted, strconv.Quote(it))
		}
	}
	sort.Strings(quoted)
	return "[" + strings.Join(quoted, ", ") + "]"
}

package admission

import (
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

func TestObjects(t *testing.T) {
	long := strings.Repeat("a-very-long-service-set-name", 10)
	objs, err := AttributionObjects(long, []string{"system:serviceaccount:holdfast:controller", "", "admin", "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("got %d objects, want the policy and its binding", len(objs))
	}
	policy := &admissionv1.MutatingAdmissionPolicy{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, policy); err != nil {
		t.Fatal(err)
	}
	binding := &admissionv1.MutatingAdmissionPolicyBinding{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[1].Object, binding); err != nil {
		t.Fatal(err)
	}
	if n := len(policy.Name); n > 253 || policy.Name != binding.Name || binding.Spec.PolicyName != policy.Name {
		t.Errorf("names: policy %q, binding %q -> %q", policy.Name, binding.Name, binding.Spec.PolicyName)
	}
	if policy.Spec.FailurePolicy == nil || *policy.Spec.FailurePolicy != admissionv1.Ignore {
		t.Error("failurePolicy must be Ignore: a broken policy never blocks anyone")
	}
	if got := policy.Spec.MatchConstraints.ObjectSelector.MatchLabels[holdfastv1.OwnerLabel]; got != naming.LabelValue(long) {
		t.Errorf("objectSelector owner = %q, want the set's label value", got)
	}
	rule := policy.Spec.MatchConstraints.ResourceRules[0]
	if len(rule.Operations) != 1 || rule.Operations[0] != admissionv1.Update || rule.Resources[0] != "*" {
		t.Errorf("rule = %+v, want UPDATE of resources without subresources", rule)
	}
	want := `!(request.userInfo.username in ["admin", "system:serviceaccount:holdfast:controller"])`
	if got := policy.Spec.MatchConditions[0].Expression; got != want {
		t.Errorf("matchCondition = %s, want %s", got, want)
	}
	if _, err := AttributionObjects("web", []string{""}); err == nil {
		t.Error("a policy without Holdfast's user name would stamp Holdfast's own writes")
	}
}

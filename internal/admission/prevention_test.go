package admission

import (
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// PreventionObjects: one policy and binding per mode in use, the binding selecting that mode's
// services with its action; refusals name what to fix.
func TestPreventionObjects(t *testing.T) {
	objs, err := PreventionObjects(Prevention{ServiceSet: "shop", Holdfast: []string{"holdfast"},
		Services: []PreventedService{{Name: "web", Mode: holdfastv1.PreventionDeny}, {Name: "api", Mode: holdfastv1.PreventionDeny}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("got %d objects, want the Deny policy and its binding only", len(objs))
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[1].Object, binding); err != nil {
		t.Fatal(err)
	}
	if binding.Name != "holdfast-prevention-shop-deny" || binding.Spec.PolicyName != binding.Name ||
		len(binding.Spec.ValidationActions) != 1 || binding.Spec.ValidationActions[0] != admissionv1.Deny {
		t.Fatalf("binding %s: policy %s, actions %v", binding.Name, binding.Spec.PolicyName, binding.Spec.ValidationActions)
	}
	sel := binding.Spec.MatchResources.ObjectSelector
	if sel.MatchLabels[holdfastv1.OwnerLabel] != "shop" || len(sel.MatchExpressions) != 1 ||
		strings.Join(sel.MatchExpressions[0].Values, ",") != "web,api" {
		t.Fatalf("binding selects %+v", sel)
	}

	if _, err := PreventionObjects(Prevention{ServiceSet: "shop", Services: []PreventedService{{Name: "web", Mode: holdfastv1.PreventionWarn}}}); err == nil ||
		!strings.Contains(err.Error(), "Holdfast's own user name") {
		t.Fatalf("without Holdfast's user name: %v", err)
	}
	deep := "/" + strings.Repeat("a/", maxFieldDepth) + "b"
	if _, err := PreventionObjects(Prevention{ServiceSet: "shop", Holdfast: []string{"holdfast"}, Services: []PreventedService{{Name: "web",
		Mode: holdfastv1.PreventionDeny, Ignore: []holdfastv1.IgnoreRule{{Paths: []string{deep}}}}}}); err == nil ||
		!strings.Contains(err.Error(), "deeper than") {
		t.Fatalf("an ignored path deeper than %d fields: %v", maxFieldDepth, err)
	}
	if objs, err := PreventionObjects(Prevention{ServiceSet: "shop", Holdfast: []string{"holdfast"}}); err != nil || len(objs) != 0 {
		t.Fatalf("no service under prevention: %d objects, %v", len(objs), err)
	}
}

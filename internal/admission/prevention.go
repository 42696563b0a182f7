package admission

import (
	"fmt"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fieldset"
	"holdfast.dev/holdfast/internal/naming"
)

// PreventionService is the name of the service the prevention objects are applied as (see
// AttributionService).
const PreventionService = "holdfast.prevention"

// preventionPrefix starts the names of a service set's prevention policies and bindings.
const preventionPrefix = "holdfast-prevention-"

// PreventionName is the name of the policy, and of its binding, that handles a service set's
// services in mode (Warn or Deny): one of each per service set and mode.
func PreventionName(serviceSet string, mode holdfastv1.PreventionMode) string {
	return preventionPrefix + naming.LabelValue(serviceSet) + "-" + strings.ToLower(string(mode))
}

// ClusterControllers are the identities of a cluster's own controllers, which prevention never
// stops: kube-controller-manager and kube-scheduler as themselves, every ServiceAccount in
// kube-system (kube-controller-manager's controllers with --use-service-account-credentials:
// the garbage collector, the namespace controller, ...), and kubelets. Whoever can act as one
// of them already administers the cluster.
var (
	ClusterControllerUsers  = []string{"system:kube-controller-manager", "system:kube-scheduler"}
	ClusterControllerGroups = []string{"system:serviceaccounts:kube-system", "system:nodes"}
)

// Prevention is what a service set asks of a target's API server (drift.prevention).
type Prevention struct {
	// ServiceSet is the MultiClusterService's name.
	ServiceSet string
	// Holdfast are Holdfast's own user names on the target (its connection's, and the
	// ServiceAccount it acts as for the set); never stopped.
	Holdfast []string
	// BreakGlass may change managed objects anyway.
	BreakGlass holdfastv1.BreakGlass
	// Services are the services whose prevention is Warn or Deny.
	Services []PreventedService
}

// PreventedService is one service under prevention.
type PreventedService struct {
	Name string
	Mode holdfastv1.PreventionMode
	// Ignore are the ignore rules in effect for the service (drift.Policy.IgnoreRules): the
	// fields they name are never covered.
	Ignore []holdfastv1.IgnoreRule
}

// PreventionObjects returns, for each mode some service has, a ValidatingAdmissionPolicy and its
// binding. The policy covers UPDATE and DELETE of the main resource (never a subresource) of
// the service set's objects of those services, by anyone but Holdfast, the break-glass users
// and groups and the cluster's own controllers, of objects not exempted on the cluster
// (holdfast.dev/drift-ignore). An update is covered only when it takes a field from Holdfast's
// own field set, outside the ignored paths (see fieldsUnchanged): adding fields, another
// manager's fields and values set to what they already are go through. A deletion is covered
// unless the object's namespace is being deleted.
func PreventionObjects(p Prevention) ([]*unstructured.Unstructured, error) {
	if celList(p.Holdfast) == "[]" {
		return nil, fmt.Errorf("prevention policy of service set %s: Holdfast's own user name on the cluster is not known", p.ServiceSet)
	}
	var out []*unstructured.Unstructured
	for _, mode := range []holdfastv1.PreventionMode{holdfastv1.PreventionDeny, holdfastv1.PreventionWarn} {
		var services []PreventedService
		for _, s := range p.Services {
			if s.Mode == mode {
				services = append(services, s)
			}
		}
		if len(services) == 0 {
			continue
		}
		objs, err := preventionPolicy(p, mode, services)
		if err != nil {
			return nil, fmt.Errorf("prevention policy of service set %s: %w", p.ServiceSet, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

func preventionPolicy(p Prevention, mode holdfastv1.PreventionMode, services []PreventedService) ([]*unstructured.Unstructured, error) {
	name := PreventionName(p.ServiceSet, mode)
	var names []string
	var rules []ignoreRuleFor
	for _, s := range services {
		names = append(names, s.Name)
		for _, r := range s.Ignore {
			rules = append(rules, ignoreRuleFor{service: s.Name, rule: r})
		}
	}
	updated, err := fieldsUnchanged(rules)
	if err != nil {
		return nil, err
	}
	messages := preventionMessages[mode]
	about := `request.kind.kind + " " + (has(oldObject.metadata.namespace) && oldObject.metadata.namespace != "" ? oldObject.metadata.namespace + "/" : "") + request.name + ` +
		strconv.Quote(" is managed by Holdfast (service set "+p.ServiceSet+", service ") + ` + variables.service + "): "`
	policy := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionv1.MatchResources{
				ResourceRules:  mainResources(admissionv1.Update, admissionv1.Delete),
				ObjectSelector: ownedBy(p.ServiceSet),
				MatchPolicy:    ptr.To(admissionv1.Equivalent),
			},
			MatchConditions: preventionExemptions(p),
			Variables: []admissionv1.Variable{
				{Name: "service", Expression: hasKey("oldObject.metadata.labels", holdfastv1.ServiceLabel) +
					" ? oldObject.metadata.labels[" + strconv.Quote(holdfastv1.ServiceLabel) + `] : ""`},
				{Name: "before", Expression: holdfastEntries("oldObject")},
				{Name: "after", Expression: holdfastEntries("object")},
			},
			Validations: []admissionv1.Validation{{
				Expression:        `request.operation != "UPDATE" || !(` + claimsHoldfast + `)`,
				Message:           "managed by Holdfast: " + messages.claim,
				MessageExpression: about + " + " + strconv.Quote(messages.claim),
				Reason:            ptr.To(metav1.StatusReasonForbidden),
			}, {
				Expression:        `request.operation != "UPDATE" || ` + updated,
				Message:           "managed by Holdfast: " + messages.update,
				MessageExpression: about + " + " + strconv.Quote(messages.update),
				Reason:            ptr.To(metav1.StatusReasonForbidden),
			}, {
				Expression:        `request.operation != "DELETE" || (namespaceObject != null && has(namespaceObject.metadata.deletionTimestamp))`,
				Message:           "managed by Holdfast: " + messages.delete,
				MessageExpression: about + " + " + strconv.Quote(messages.delete),
				Reason:            ptr.To(metav1.StatusReasonForbidden),
			}},
			// A policy that cannot be evaluated never stops anyone: the change is then drift.
			FailurePolicy: ptr.To(admissionv1.Ignore),
		},
	}
	selector := ownedBy(p.ServiceSet)
	selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: holdfastv1.ServiceLabel, Operator: metav1.LabelSelectorOpIn, Values: names}}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{messages.action},
			MatchResources:    &admissionv1.MatchResources{ObjectSelector: selector},
		},
	}
	return toUnstructured(policy, binding)
}

// preventionExemptions are who a prevention policy lets through: Holdfast itself, the cluster's
// own controllers, objects exempt on the cluster, and the break-glass users and groups.
func preventionExemptions(p Prevention) []admissionv1.MatchCondition {
	conditions := []admissionv1.MatchCondition{{
		Name:       "not-holdfast",
		Expression: "!(request.userInfo.username in " + celList(p.Holdfast) + ")",
	}, {
		Name: "not-the-clusters-own-controllers",
		Expression: "!(request.userInfo.username in " + celList(ClusterControllerUsers) + ") && " +
			"!(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in " + celList(ClusterControllerGroups) + "))",
	}, {
		Name:       "not-exempt-on-the-cluster",
		Expression: "!(" + hasKey("oldObject.metadata.annotations", holdfastv1.DriftIgnoreAnnotation) + " && oldObject.metadata.annotations[" + strconv.Quote(holdfastv1.DriftIgnoreAnnotation) + `] == "true")`,
	}}
	if users := celList(p.BreakGlass.Users); users != "[]" {
		conditions = append(conditions, admissionv1.MatchCondition{Name: "not-break-glass-user",
			Expression: "!(request.userInfo.username in " + users + ")"})
	}
	if groups := celList(p.BreakGlass.Groups); groups != "[]" {
		conditions = append(conditions, admissionv1.MatchCondition{Name: "not-break-glass-group",
			Expression: "!(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in " + groups + "))"})
	}
	return conditions
}

// claimsHoldfast is the CEL condition that a request writes under Holdfast's field manager
// name: it says so (the field manager of an update or apply, request.options.fieldManager), or
// Holdfast's apply entry in managedFields appeared or got a new time in it (the API server
// dates the entry of the manager that writes). Nobody but Holdfast may: a change made under
// its name is drift all the same (package drift, Verdict.Claimed), and the name would pass
// every other check here, since Holdfast's own field set then stays as it was.
var claimsHoldfast = `(has(request.options) && has(request.options.fieldManager) && request.options.fieldManager == ` +
	strconv.Quote(fieldset.FieldManager) + `) || ` +
	`(size(variables.after) > 0 && (size(variables.before) == 0 || ` +
	`has(variables.after[0].time) != has(variables.before[0].time) || ` +
	`(has(variables.after[0].time) && variables.after[0].time != variables.before[0].time)))`

// preventionMessages say what happens to a covered change in each mode, and what to do instead.
var preventionMessages = map[holdfastv1.PreventionMode]struct {
	action                admissionv1.ValidationAction
	update, delete, claim string
}{
	holdfastv1.PreventionDeny: {
		action: admissionv1.Deny,
		claim: "writing as field manager \"" + fieldset.FieldManager + "\" is refused: that name is Holdfast's own, and a change made under it by anyone else is drift all the same (drift.prevention Deny). " +
			"Use a field manager of your own (kubectl --field-manager=NAME) for fields Holdfast does not manage, and change the service set's declaration on the hub for those it does.",
		update: "changing the fields Holdfast manages is refused (drift.prevention Deny). Change the service set's declaration on the hub instead, or have a break-glass user or group (spec.drift.breakGlass) make the change.",
		delete: "deleting it is refused (drift.prevention Deny). Remove it from the service set's declaration on the hub instead, or have a break-glass user or group (spec.drift.breakGlass) delete it.",
	},
	holdfastv1.PreventionWarn: {
		action: admissionv1.Warn,
		claim: "writing as field manager \"" + fieldset.FieldManager + "\", Holdfast's own, does not hide a change: it is drift, recorded and put back per the service set's drift policy. " +
			"Use a field manager of your own, and change the service set's declaration on the hub instead.",
		update: "this change of fields Holdfast manages is drift: it will be recorded and put back per the service set's drift policy. Change the service set's declaration on the hub instead.",
		delete: "it will be recorded as drift and re-created per the service set's drift policy. Remove it from the service set's declaration on the hub instead.",
	},
}

// ownedBy selects the service set's managed objects.
func ownedBy(serviceSet string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{
		holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue,
		holdfastv1.OwnerLabel:     naming.LabelValue(serviceSet),
	}}
}

// mainResources matches ops on every resource of every group and version, and on no
// subresource ("*" matches no status or scale): a status write is not a person's change, and a
// scale write carries a Scale object, not the object.
func mainResources(ops ...admissionv1.OperationType) []admissionv1.NamedRuleWithOperations {
	return []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
		Operations: ops,
		Rule:       admissionv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
	}}}
}

// holdfastEntries is Holdfast's own apply entry in obj's managedFields, as a list (empty when
// there is none).
func holdfastEntries(obj string) string {
	return obj + ".metadata.managedFields.filter(e, e.manager == " + strconv.Quote(fieldset.FieldManager) +
		` && e.operation == "Apply" && (!has(e.subresource) || e.subresource == ""))`
}

// toUnstructured converts typed admission objects into what the apply path takes.
func toUnstructured(objs ...runtime.Object) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: m}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "status")
		out = append(out, u)
	}
	return out, nil
}

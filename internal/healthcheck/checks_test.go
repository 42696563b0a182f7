package healthcheck

import (
	"strings"
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func object(apiVersion, kind string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": "x", "namespace": "demo"}}}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

// TestChecksJudgeTheirKind: a check judges objects of its kind only (any version), healthy when
// its expression is true, failed when its failed expression is, in progress otherwise, and in
// progress with the reason when the expression cannot be evaluated (a field not there yet).
func TestChecksJudgeTheirKind(t *testing.T) {
	checks, err := Compile([]holdfastv1.HealthCheck{
		{Group: "example.com", Kind: "Database", Expr: `has(self.status) && self.status.phase == "Ready"`, Failed: `has(self.status) && self.status.phase == "Broken"`},
		{Kind: "ConfigMap", Expr: `self.data.ready == "true"`},
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		obj    *unstructured.Unstructured
		judged bool
		want   status.Status
		msg    string
	}{
		{"ready database", object("example.com/v1", "Database", map[string]any{"status": map[string]any{"phase": "Ready"}}), true, status.CurrentStatus, ""},
		{"another version", object("example.com/v2", "Database", map[string]any{"status": map[string]any{"phase": "Ready"}}), true, status.CurrentStatus, ""},
		{"no status yet", object("example.com/v1", "Database", nil), true, status.InProgressStatus, "is not true yet"},
		{"broken", object("example.com/v1", "Database", map[string]any{"status": map[string]any{"phase": "Broken"}}), true, status.FailedStatus, "failed expression is true"},
		{"field missing", object("v1", "ConfigMap", map[string]any{"data": map[string]any{}}), true, status.InProgressStatus, "no such key"},
		{"configmap ready", object("v1", "ConfigMap", map[string]any{"data": map[string]any{"ready": "true"}}), true, status.CurrentStatus, ""},
		{"kind of another group", object("other.io/v1", "Database", nil), false, "", ""},
		{"kind without a check", object("v1", "Secret", nil), false, "", ""},
	}
	for _, tc := range cases {
		h, judged := checks.Health(tc.obj)
		if judged != tc.judged || h.Status != tc.want || !strings.Contains(h.Message, tc.msg) {
			t.Errorf("%s: Health = %+v (judged %v), want %s containing %q (judged %v)", tc.name, h, judged, tc.want, tc.msg, tc.judged)
		}
	}
	var none *Checks
	if _, judged := none.Health(object("v1", "ConfigMap", nil)); judged {
		t.Error("nil checks judged an object")
	}
}

// TestBadChecksAreRefusedByName: a check that does not compile, is not a bool, or names a kind
// another check names is refused with an error naming it.
func TestBadChecksAreRefusedByName(t *testing.T) {
	cases := []struct {
		checks []holdfastv1.HealthCheck
		want   string
	}{
		{[]holdfastv1.HealthCheck{{Kind: "ConfigMap", Expr: `self.data.(`}}, "spec.healthChecks[0] (ConfigMap) expr"},
		{[]holdfastv1.HealthCheck{{Kind: "ConfigMap", Expr: `true`, Failed: `"yes"`}}, "spec.healthChecks[0] (ConfigMap) failed"},
		{[]holdfastv1.HealthCheck{{Kind: "ConfigMap", Expr: `1 + 1`}}, "not a bool"},
		{[]holdfastv1.HealthCheck{{Kind: "Job", Group: "batch", Expr: `true`}, {Kind: "Job", Group: "batch", Expr: `false`}}, "spec.healthChecks[1]: a second check of kind Job.batch"},
	}
	for _, tc := range cases {
		if _, err := Compile(tc.checks); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%+v) = %v, want an error containing %q", tc.checks, err, tc.want)
		}
	}
}

// TestEvaluationIsBounded: an expression that would visit a million values stops at the cost
// limit and leaves the object in progress with the reason, instead of holding the worker.
func TestEvaluationIsBounded(t *testing.T) {
	ten := "[0,1,2,3,4,5,6,7,8,9]"
	expr := ten + ".map(a, " + ten + ".map(b, " + ten + ".map(c, " + ten + ".map(d, " + ten + ".map(e, " + ten + ".map(f, a+b+c+d+e+f)))))).size() > 0"
	checks, err := Compile([]holdfastv1.HealthCheck{{Kind: "ConfigMap", Expr: expr}})
	if err != nil {
		t.Fatal(err)
	}
	h, judged := checks.Health(object("v1", "ConfigMap", nil))
	if !judged || h.Status != status.InProgressStatus || !strings.Contains(h.Message, "cost limit") {
		t.Fatalf("Health = %+v (judged %v), want InProgress for exceeding the cost limit", h, judged)
	}
}

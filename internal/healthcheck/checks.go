package healthcheck

import (
	"errors"
	"fmt"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
)

// costLimit bounds the work one evaluation may do (CEL's cost units: about one per value
// visited), so a check over a huge list, or written to loop, ends with an error instead of
// holding a worker.
const costLimit = 1_000_000

// Checks are a service set's compiled health checks, by kind. The zero value checks nothing.
type Checks struct {
	byKind map[schema.GroupKind]check
}

type check struct {
	healthy, failed cel.Program
	expr            string
}

// Compile compiles checks. The error names the check that does not compile, or the kind two
// checks name; nothing is compiled then.
func Compile(checks []holdfastv1.HealthCheck) (*Checks, error) {
	if len(checks) == 0 {
		return &Checks{}, nil
	}
	env, err := cel.NewEnv(cel.Variable("self", cel.DynType))
	if err != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	out := &Checks{byKind: map[schema.GroupKind]check{}}
	for i, hc := range checks {
		gk := schema.GroupKind{Group: hc.Group, Kind: hc.Kind}
		if _, dup := out.byKind[gk]; dup {
			return nil, fmt.Errorf("spec.healthChecks[%d]: a second check of kind %s; keep one", i, gk)
		}
		c := check{expr: hc.Expr}
		if c.healthy, err = program(env, hc.Expr); err != nil {
			return nil, fmt.Errorf("spec.healthChecks[%d] (%s) expr: %w", i, gk, err)
		}
		if hc.Failed != "" {
			if c.failed, err = program(env, hc.Failed); err != nil {
				return nil, fmt.Errorf("spec.healthChecks[%d] (%s) failed: %w", i, gk, err)
			}
		}
		out.byKind[gk] = c
	}
	return out, nil
}

// program compiles one boolean expression.
func program(env *cel.Env, expr string) (cel.Program, error) {
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if t := ast.OutputType(); t != cel.BoolType && t != cel.DynType {
		return nil, fmt.Errorf("%q is a %s, not a bool", expr, t)
	}
	return env.Program(ast, cel.CostLimit(costLimit), cel.InterruptCheckFrequency(100))
}

// Health judges u with the check of its kind; ok is false when no check names its kind
// (kstatus judges it then).
func (c *Checks) Health(u *unstructured.Unstructured) (h apply.Health, ok bool) {
	if c == nil || len(c.byKind) == 0 || u == nil {
		return apply.Health{}, false
	}
	ck, ok := c.byKind[u.GroupVersionKind().GroupKind()]
	if !ok {
		return apply.Health{}, false
	}
	vars := map[string]any{"self": u.Object}
	if ck.failed != nil {
		failed, err := eval(ck.failed, vars)
		if err == nil && failed {
			return apply.Health{Status: status.FailedStatus, Message: "the health check's failed expression is true"}, true
		}
	}
	healthy, err := eval(ck.healthy, vars)
	switch {
	case err != nil:
		return apply.Health{Status: status.InProgressStatus, Message: "health check: " + err.Error()}, true
	case !healthy:
		return apply.Health{Status: status.InProgressStatus, Message: fmt.Sprintf("health check %q is not true yet", ck.expr)}, true
	}
	return apply.Health{Status: status.CurrentStatus}, true
}

// eval evaluates a boolean program.
func eval(p cel.Program, vars map[string]any) (bool, error) {
	out, _, err := p.Eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, errors.New("the expression did not give a bool")
	}
	return b, nil
}

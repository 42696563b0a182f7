package clusterservicestatus

import (
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/fleet"
)

// TestPermissionRefusalsComeBackSooner: a service set whose ServiceAccount was refused something,
// applying or withdrawing, is looked at again within permissionRetry (its RBAC on the target is
// fixed out of band); other refusals wait for the next full reconcile.
func TestPermissionRefusalsComeBackSooner(t *testing.T) {
	refused := &fleet.ImpersonationError{ServiceAccount: fleet.ServiceAccount{Namespace: "team-a", Name: "deployer"}, Verb: "create"}
	otherForbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("exceeded quota"))
	failed := func(err error) []serviceOutcome {
		return []serviceOutcome{{name: "web", result: &apply.Result{Objects: []apply.ObjectResult{
			{Action: apply.Created}, {Action: apply.Failed, Err: fmt.Errorf("reading live object: %w", err)}}}}}
	}
	const full = 10 * time.Hour
	tests := []struct {
		name        string
		services    []serviceOutcome
		withdrawErr error
		want        time.Duration
	}{
		{name: "nothing failed", services: []serviceOutcome{{name: "web", result: &apply.Result{Objects: []apply.ObjectResult{{Action: apply.Created}}}}}, want: full},
		{name: "an object refused to the ServiceAccount", services: failed(refused), want: permissionRetry},
		{name: "an object refused otherwise", services: failed(otherForbidden), want: full},
		{name: "a withdrawal refused to the ServiceAccount", withdrawErr: errors.Join(errors.New("withdrawing service \"a\""),
			fmt.Errorf("withdrawing service %q: %w", "b", fmt.Errorf("ConfigMap b/x: %w", refused))), want: permissionRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reconciler{memory: newMemory(), fights: &drift.Fights{}}
			css := &holdfastv1.ClusterServiceStatus{}
			css.Namespace, css.Name = "fleet", "web.c1"
			s := &scope{css: css, services: tt.services, withdrawErr: tt.withdrawErr}
			if got := r.comeBackAfter(s, full); got != tt.want {
				t.Errorf("comes back after %s, want %s", got, tt.want)
			}
		})
	}
}

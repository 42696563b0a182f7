package agent

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestTransient: what Open asks again for is the hub not answering or too busy to; a refusal
// (revoked, not found, invalid) is not.
func TestTransient(t *testing.T) {
	sa := schema.GroupResource{Resource: "serviceaccounts"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"no answer", fmt.Errorf("requesting the token: %w", &url.Error{Op: "Post", URL: "https://hub", Err: context.DeadlineExceeded}), true},
		{"too many requests", apierrors.NewTooManyRequests("busy", 1), true},
		{"server timeout", apierrors.NewServerTimeout(sa, "create", 1), true},
		{"service unavailable", apierrors.NewServiceUnavailable("starting"), true},
		{"internal error", apierrors.NewInternalError(errors.New("etcd")), true},
		{"revoked", apierrors.NewUnauthorized("token revoked"), false},
		{"not found", apierrors.NewNotFound(sa, "holdfast-agent"), false},
		{"invalid", apierrors.NewBadRequest("bad expiration"), false},
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("%s: transient = %v, want %v", tc.name, got, tc.want)
		}
	}
}

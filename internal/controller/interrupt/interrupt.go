// Package interrupt decides what a reconcile whose context ended returns: nothing when the
// controller is shutting down (the next process picks up where this one stopped), an error when
// the reconcile ran past its timeout (--reconcile-timeout), so that controller-runtime retries
// it with backoff instead of dropping it.
package interrupt

import (
	"context"
	"errors"
	"fmt"
	"time"

	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Result reports whether ctx ended and, if it did, the error the reconcile returns: nil on a
// shutdown, one naming the timeout when the reconcile's own deadline passed.
func Result(ctx context.Context) (ended bool, err error) {
	switch cause := ctx.Err(); {
	case cause == nil:
		return false, nil
	case errors.Is(cause, context.DeadlineExceeded):
		return true, fmt.Errorf("the reconcile ran past its timeout (--reconcile-timeout); retried with backoff: %w", cause)
	default:
		return true, nil
	}
}

// Finish ends a reconcile with its one status patch, deferred: when ctx ended, *res and *retErr
// become what Result says and nothing is written; otherwise patch runs and its error joins
// *retErr.
func Finish(ctx context.Context, res *reconcile.Result, retErr *error, patch func(context.Context) error) {
	if ended, err := Result(ctx); ended {
		*res, *retErr = reconcile.Result{}, err
		return
	}
	if err := patch(ctx); err != nil {
		*retErr = kerrors.NewAggregate([]error{*retErr, err})
	}
}

// Unstoppable returns a context for work that must end once begun whatever a shutdown does:
// a drift correction, whose apply may reach the cluster after the process was told to stop, and
// whose record would be lost with it (the next process finds the object in sync). It keeps
// ctx's values and its deadline (the reconcile's own timeout, which still ends it); without one,
// it ends after limit.
func Unstoppable(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	detached := context.WithoutCancel(ctx)
	if deadline, ok := ctx.Deadline(); ok {
		return context.WithDeadline(detached, deadline)
	}
	return context.WithTimeout(detached, limit)
}

// Package interrupt decides what a reconcile whose context ended returns: nothing when the
// controller is shutting down (the next process picks up where this one stopped), an error when
// the reconcile ran past its timeout (--reconcile-timeout), so that controller-runtime retries
// it with backoff instead of dropping it.
package interrupt

import (
	"context"
	"errors"
	"fmt"
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

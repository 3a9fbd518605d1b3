package api

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// waitCurrent makes a read without resourceVersion consistent, as kube-apiserver's are:
// it answers once the read model holds at least what the streams held when it came, so a
// client that wrote through another gateway reads its write. A read model that does not
// get there in time is 504, streams that cannot be asked where they end 503.
func (s *server) waitCurrent(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, tooLargeRVWait)
	defer cancel()
	err := s.rm.WaitCurrent(wctx, s.heads)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeoutError(fmt.Sprintf("the read model has not caught up with the streams (at %s)", s.rm.RV()), 1)
	default:
		return apierrors.NewServiceUnavailable(fmt.Sprintf("consistent read: %v", err))
	}
}

package api

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vmop/vmop/services/api/readmodel"
)

// tooLargeRVWait is how long a request naming a resourceVersion the read model has not
// reached waits for it, as kube-apiserver's watch cache does, before answering 504.
const tooLargeRVWait = 3 * time.Second

// listQuery decodes and checks a list's or watch's query as kube-apiserver does: a value
// of the wrong type is 400, a forbidden combination of resourceVersion, resourceVersionMatch,
// sendInitialEvents and continue is 422 (ListOptions), a malformed resourceVersion is 400.
// For a watch it defaults as kube-apiserver with WatchList does: without a resourceVersion
// (or "0") the watch sends the current objects first.
func listQuery(q url.Values, watch bool) (internalversion.ListOptions, error) {
	return listQueryOf(q, watch, readmodel.CheckRV, readModelRVForm)
}

// readModelRVForm says what the read model's resourceVersions look like.
const readModelRVForm = `"0" or "<SPECS sequence>.<STATUS sequence>" (a watch event's: twice)`

// checkRV is 400 for a resourceVersion checkRV refuses, saying it must be rvForm.
func checkRV(rv string, check func(string) error, rvForm string) error {
	if check(rv) == nil {
		return nil
	}
	err := field.Invalid(field.NewPath("resourceVersion"), rv, "must be "+rvForm)
	return apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", err))
}

// listQueryOf is listQuery for a store whose resourceVersions checkRV accepts (rvForm says
// what they look like): the read model's, or the Events' EVENTS sequence.
func listQueryOf(q url.Values, watch bool, check func(string) error, rvForm string) (internalversion.ListOptions, error) {
	var opts internalversion.ListOptions
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, &opts); err != nil {
		return opts, apierrors.NewBadRequest(err.Error())
	}
	opts.Watch = watch
	internalversion.SetListOptionsDefaults(&opts, true)
	if errs := validation.ValidateListOptions(&opts, true); len(errs) > 0 {
		return opts, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	if err := checkRV(opts.ResourceVersion, check, rvForm); err != nil {
		return opts, err
	}
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds < 0 {
		return opts, badRequest("timeoutSeconds must be a non-negative integer")
	}
	if opts.Limit < 0 {
		return opts, badRequest("limit must be a non-negative integer")
	}
	if opts.Continue != "" && !newestRV(opts.ResourceVersion) {
		return opts, badRequest("specifying resource version is not allowed when using continue")
	}
	return opts, nil
}

// newestRV reports whether the request asks for the newest state: no resourceVersion, or
// "0" (any state, and the read model has only its newest).
func newestRV(rv string) bool { return rv == "" || rv == "0" }

// waitRV waits until the read model reflects rv; a read model that does not get there in
// time is 504 with the cause client-go recognises (it then asks for the newest state).
func (s *server) waitRV(ctx context.Context, rv string) error {
	if newestRV(rv) {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, tooLargeRVWait)
	defer cancel()
	err := s.rm.WaitRV(wctx, rv)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		st := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %s, current: %s", rv, s.rm.RV()), 1)
		st.ErrStatus.Details.Causes = []metav1.StatusCause{{
			Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version",
		}}
		return st
	default:
		return fmt.Errorf("wait for resourceVersion %s: %w", rv, err)
	}
}

package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// statusError is what handlers return for every client-visible failure; the one error
// handler (writeError) renders it. Anything else becomes a 500.
type statusError = apierrors.StatusError

func badRequest(format string, args ...any) error {
	return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
}

// invalid is the 422 of admission stages 1 and 3: every field error of the request,
// rendered "<path>: <Type>: <detail>" and joined by ", " (api-rules §5.3).
func invalid(gk schema.GroupKind, name string, errs field.ErrorList) error {
	return fieldErrorStatus(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, gk, name, errs)
}

// denied is the 403 of a defaulting (stage 2) denial: exactly one field error.
func denied(gk schema.GroupKind, name string, err *field.Error) error {
	return fieldErrorStatus(http.StatusForbidden, metav1.StatusReasonForbidden, gk, name, field.ErrorList{err})
}

func fieldErrorStatus(code int32, reason metav1.StatusReason, gk schema.GroupKind, name string, errs field.ErrorList) error {
	msgs := make([]string, 0, len(errs))
	causes := make([]metav1.StatusCause, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, e.Error())
		causes = append(causes, metav1.StatusCause{
			Type:    metav1.CauseType(e.Type),
			Message: e.ErrorBody(),
			Field:   e.Field,
		})
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    code,
		Reason:  reason,
		Message: strings.Join(msgs, ", "),
		Details: &metav1.StatusDetails{Name: name, Group: gk.Group, Kind: gk.Kind, Causes: causes},
	}}
}

// asStatus maps any error to the Status the client sees. Only unexpected errors are 500s.
func asStatus(err error) (metav1.Status, bool) {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return se.Status(), true
	}
	return apierrors.NewInternalError(errors.New("internal error")).ErrStatus, false
}

// unprocessable is a 422 without field errors (a patch that cannot be applied).
func unprocessable(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid, Message: msg,
	}}
}

func unsupportedMediaType(contentType string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format: %s", contentType),
	}}
}

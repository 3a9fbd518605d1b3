package api

import (
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// statusError is what handlers return for every client-visible failure; the one error
// handler (writeError) renders it. Anything else becomes a 500.
type statusError = apierrors.StatusError

func badRequest(format string, args ...any) error {
	return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
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

package admission

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Invalid is the 422 of admission stages 1 and 3: every field error of the request,
// rendered "<path>: <Type>: <detail>" and joined by ", " (api-rules §5.3).
func Invalid(gk schema.GroupKind, name string, errs field.ErrorList) error {
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

package admission

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// renameWarnings rewrites the field paths in admission warnings, in place.
func renameWarnings(warnings []string, rename func(string) string) {
	for i, w := range warnings {
		if rename != nil {
			warnings[i] = rename(w)
		}
	}
}

// renameStatus rewrites the field paths of an admission error's Status.
func renameStatus(err error, rename func(string) string) error {
	var se *apierrors.StatusError
	if rename == nil || !errors.As(err, &se) {
		return err
	}
	st := se.ErrStatus
	st.Message = rename(st.Message)
	if st.Details != nil {
		d := *st.Details
		d.Causes = append(d.Causes[:0:0], d.Causes...)
		for i := range d.Causes {
			d.Causes[i].Field = rename(d.Causes[i].Field)
			d.Causes[i].Message = rename(d.Causes[i].Message)
		}
		st.Details = &d
	}
	return &apierrors.StatusError{ErrStatus: st}
}

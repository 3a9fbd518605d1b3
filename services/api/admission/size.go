package admission

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vmop/vmop/pkg/model"
)

// dataSizeError refuses a Secret or ConfigMap holding more than model.MaxSecretSize bytes
// of data with 413, as its body would be refused had it been alone in the request.
func dataSizeError(r *Request) error {
	var size int
	switch r.Kind.Kind {
	case "Secret":
		var sec model.Secret
		if remarshal(r.Obj, &sec) != nil {
			return nil // not decodable: the validator reports it
		}
		size = model.SecretSize(&sec)
	case "ConfigMap":
		var cm model.ConfigMap
		if remarshal(r.Obj, &cm) != nil {
			return nil
		}
		size = model.ConfigMapSize(&cm)
	default:
		return nil
	}
	if size > model.MaxSecretSize {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
			"%s %s holds %d bytes of data, more than the limit of %d", r.Kind.Kind, r.Name, size, model.MaxSecretSize))
	}
	return nil
}

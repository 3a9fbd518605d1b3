package api

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// dryRun reports whether a write asks to run every stage but store nothing (`dryRun=All`,
// the one value Kubernetes knows). Any other value is 400, as in Kubernetes, so that a
// misspelt dry run never writes.
func dryRun(c echo.Context) (bool, error) {
	return dryRunValues(c.QueryParams()["dryRun"])
}

// deleteOptions reads a DELETE's options: its dry run (in the query, or where kubectl's
// `delete --dry-run=server` sends it, a DeleteOptions body) and the body's preconditions.
func deleteOptions(c echo.Context) (dry bool, pre *metav1.Preconditions, err error) {
	if dry, err = dryRun(c); err != nil {
		return false, nil, err
	}
	body, err := readBody(c)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return dry, nil, err
	}
	var opts metav1.DeleteOptions
	if isProtobuf(c.Request().Header.Get(echo.HeaderContentType)) { // client-go's typed Delete
		if opts, err = protobufDeleteOptions(body); err != nil {
			return false, nil, err
		}
	} else if err := json.Unmarshal(body, &opts); err != nil {
		return false, nil, badRequest("the request body is not valid DeleteOptions: %v", err)
	}
	bodyDry, err := dryRunValues(opts.DryRun)
	return dry || bodyDry, opts.Preconditions, err
}

// checkPreconditions is 409, as kube-apiserver answers, when the object (obj, its record
// at seq) is not the one the DELETE's preconditions name: another incarnation, or another
// version of it (a resourceVersion names a record as an update's does: by its SPECS part).
func checkPreconditions(t target, pre *metav1.Preconditions, obj map[string]any, seq uint64) error {
	if pre == nil {
		return nil
	}
	if uid := metaString(obj, "uid"); pre.UID != nil && string(*pre.UID) != uid {
		return apierrors.NewConflict(t.gr(), t.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *pre.UID, uid))
	}
	if pre.ResourceVersion != nil {
		if at, ok := specSeqOf(*pre.ResourceVersion); !ok || at != seq {
			return apierrors.NewConflict(t.gr(), t.Name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, the object's record is %d", *pre.ResourceVersion, seq))
		}
	}
	return nil
}

func dryRunValues(values []string) (bool, error) {
	for _, v := range values {
		if v != "All" {
			return false, badRequest("unsupported dryRun value %q: the only valid value is All", v)
		}
	}
	return len(values) > 0, nil
}

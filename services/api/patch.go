package api

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vmop/vmop/pkg/events"
)

// The patch media types, as kube-apiserver accepts them.
const (
	mediaTypeJSONPatch           = string(types.JSONPatchType)
	mediaTypeMergePatch          = string(types.MergePatchType)
	mediaTypeStrategicMergePatch = string(types.StrategicMergePatchType)
	mediaTypeApplyPatch          = string(types.ApplyYAMLPatchType)
)

// patch applies a JSON patch, a merge patch or (built-in kinds, strategic.go) a strategic
// merge patch to the stored object, then admits the result as an update; an apply patch is
// server-side apply (serverside.go).
func (s *server) patch(c echo.Context, t target) error {
	contentType := patchType(c.Request())
	if err := validatePatchOptions(c.Request(), contentType); err != nil {
		return err
	}
	if contentType == mediaTypeApplyPatch && t.Subresource == "" {
		return s.serverSideApply(c, t)
	}
	p, err := readBody(c)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		rec, cur, found, err := s.specs.live(c.Request().Context(), t)
		if err != nil {
			return err
		}
		if !found {
			return notFound(t.gr(), t.Name)
		}
		var readRV string
		if t.Subresource == "status" {
			stored, err := s.rm.Get(t.Kind.Plural, t.Namespace, t.Name)
			if err != nil {
				return notFound(t.gr(), t.Name)
			}
			if err := json.Unmarshal(stored.JSON, &cur); err != nil {
				return err
			}
		} else {
			readRV = s.asRead(t, rec.Seq, cur)
		}
		t.fromHub(cur) // the patch applies to the object as the client reads it
		orig, err := json.Marshal(cur)
		if err != nil {
			return err
		}
		patched, err := applyPatch(t, contentType, orig, p, s.maxObjectBytes())
		if err != nil {
			return err
		}
		var obj map[string]any
		if err := json.Unmarshal(patched, &obj); err != nil || obj == nil {
			return badRequest("the patched object is not a JSON object")
		}
		if t.Subresource == "status" {
			return s.writeStatus(c, t, obj)
		}
		if readRV != "" && metaString(obj, "resourceVersion") == readRV {
			delete(metadata(obj), "resourceVersion") // the object's own, not the client's precondition
		}
		if err := identify(obj, &t); err != nil {
			return err
		}
		retry, err := s.replaceFrom(c, t, obj, rec)
		if !retry || attempt == staleAttempts {
			return err
		}
	}
}

// staleAttempts bounds the retries of a patch or an apply that lost the compare-and-swap
// to a concurrent write: it is applied again to the new state, as kube-apiserver retries.
const staleAttempts = 5

// replaceFrom stores obj, a patch's or an apply's result computed from the object's
// record rec, as an update over rec (not read again: the append's compare-and-swap
// catches a write since). Unless obj names a resourceVersion itself (the client's
// precondition), a write since rec is a conflict and retry says to compute it again from
// the new state: stored over it, that write would be lost.
func (s *server) replaceFrom(c echo.Context, t target, obj map[string]any, rec events.SpecRecord) (retry bool, err error) {
	precondition := metaString(obj, "resourceVersion") != ""
	if !precondition {
		metadata(obj)["resourceVersion"] = strconv.FormatUint(rec.Seq, 10)
	}
	dry, err := dryRun(c)
	if err != nil {
		return false, err
	}
	var old map[string]any // rec's body afresh: the caller's copy was converted for the client
	if err := json.Unmarshal(rec.Body, &old); err != nil {
		return false, fmt.Errorf("decode spec of %s: %w", t.ref(), err)
	}
	err = s.replaceOver(c, t, obj, dry, rec, old)
	if apierrors.IsConflict(err) && !precondition {
		c.Response().Header().Del("Warning") // the next attempt's admission warns again
		return true, err
	}
	return false, err
}

// patchType is the media type of a PATCH body, without parameters.
func patchType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	if err != nil {
		return r.Header.Get(echo.HeaderContentType)
	}
	return mt
}

func isApply(r *http.Request) bool {
	return r.Method == http.MethodPatch && patchType(r) == mediaTypeApplyPatch
}

// validatePatchOptions checks the query parameters as kube-apiserver does: an apply names
// its field manager, force goes with apply only; a violation is 422 on PatchOptions.
func validatePatchOptions(r *http.Request, contentType string) error {
	q := r.URL.Query()
	opts := metav1.PatchOptions{FieldManager: q.Get("fieldManager")}
	if f := q.Get("force"); q.Has("force") {
		force, err := strconv.ParseBool(f)
		if err != nil {
			return badRequest("force must be true or false, not %q", f)
		}
		opts.Force = &force
	}
	errs := metav1validation.ValidatePatchOptions(&opts, types.PatchType(contentType))
	if len(errs) > 0 {
		return apierrors.NewInvalid(metav1.SchemeGroupVersion.WithKind("PatchOptions").GroupKind(), "", errs)
	}
	return nil
}

// maxJSONPatchOperations is kube-apiserver's bound on the operations of one JSON patch.
const maxJSONPatchOperations = 10000

// applyPatch applies p to orig, the JSON of t's object. A JSON patch may copy at most
// maxObject bytes in all (its copies could otherwise double the object at each step, to
// gigabytes from a patch of a few kilobytes); the result is size-checked by admission like
// any object.
func applyPatch(t target, contentType string, orig, p []byte, maxObject int) ([]byte, error) {
	switch contentType {
	case mediaTypeJSONPatch:
		jp, err := jsonpatch.DecodePatch(p)
		if err != nil {
			return nil, badRequest("invalid JSON patch: %v", err)
		}
		if len(jp) > maxJSONPatchOperations {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
				"The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(jp)))
		}
		opts := jsonpatch.NewApplyOptions()
		opts.AccumulatedCopySizeLimit = int64(maxObject)
		out, err := jp.ApplyWithOptions(orig, opts)
		if err != nil {
			return nil, unprocessable("the JSON patch does not apply: " + err.Error())
		}
		return out, nil
	case mediaTypeMergePatch:
		out, err := jsonpatch.MergePatch(orig, p)
		if err != nil {
			return nil, badRequest("invalid merge patch: %v", err)
		}
		return out, nil
	case mediaTypeStrategicMergePatch:
		typ := t.strategicType()
		if typ == nil {
			break
		}
		if !json.Valid(p) {
			return nil, badRequest("invalid strategic merge patch: the body is not JSON")
		}
		return strategicMergePatch(typ, orig, p)
	}
	return nil, unsupportedPatchType(t)
}

// unsupportedPatchType is kube-apiserver's 415 for a patch type the target does not take
// (a strategic merge patch of a custom kind, as of a CustomResourceDefinition's objects).
func unsupportedPatchType(t target) error {
	accepted := []string{mediaTypeJSONPatch, mediaTypeMergePatch}
	if t.Subresource == "" {
		accepted = append(accepted, mediaTypeApplyPatch)
	}
	if t.strategicType() != nil {
		accepted = append(accepted, mediaTypeStrategicMergePatch)
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(accepted, ", "),
	}}
}

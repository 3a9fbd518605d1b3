package api

import (
	"encoding/json"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// patch applies a merge patch, a JSON patch or a strategic merge patch (treated as a
// merge patch: our schemas declare no merge keys, so kubectl's strategic patches carry
// nothing a merge patch cannot express) to the stored object, then admits the result as
// an update.
func (s *server) patch(c echo.Context, t target) error {
	p, err := readBody(c)
	if err != nil {
		return err
	}
	_, cur, found, err := s.specs.live(c.Request().Context(), t)
	if err != nil {
		return err
	}
	if !found {
		return notFound(t.gr(), t.Name)
	}
	if t.Subresource == "status" {
		stored, err := s.rm.Get(t.Kind.Plural, t.Namespace, t.Name)
		if err != nil {
			return notFound(t.gr(), t.Name)
		}
		if err := json.Unmarshal(stored.JSON, &cur); err != nil {
			return err
		}
	}
	t.fromHub(cur) // the patch applies to the object as the client reads it
	orig, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	patched, err := applyPatch(c.Request().Header.Get(echo.HeaderContentType), orig, p, s.maxObjectBytes())
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
	if err := identify(obj, &t); err != nil {
		return err
	}
	return s.replace(c, t, obj)
}

// maxJSONPatchOperations is kube-apiserver's bound on the operations of one JSON patch.
const maxJSONPatchOperations = 10000

// applyPatch applies p to orig. A JSON patch may copy at most maxObject bytes in all
// (its copies could otherwise double the object at each step, to gigabytes from a
// patch of a few kilobytes); the result is size-checked by admission like any object.
func applyPatch(contentType string, orig, p []byte, maxObject int) ([]byte, error) {
	mediaType, _, _ := strings.Cut(contentType, ";")
	switch strings.TrimSpace(mediaType) {
	case "application/json-patch+json":
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
	case "application/merge-patch+json", "application/strategic-merge-patch+json":
		var doc any
		if err := json.Unmarshal(p, &doc); err != nil {
			return nil, badRequest("invalid merge patch: %v", err)
		}
		clean, err := json.Marshal(dropDirectives(doc))
		if err != nil {
			return nil, err
		}
		out, err := jsonpatch.MergePatch(orig, clean)
		if err != nil {
			return nil, badRequest("invalid merge patch: %v", err)
		}
		return out, nil
	}
	return nil, unsupportedMediaType(contentType)
}

// dropDirectives removes strategic-merge-patch directives ($patch, $setElementOrder/…,
// $retainKeys, $deleteFromPrimitiveList/…), which have no merge-patch meaning.
func dropDirectives(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if strings.HasPrefix(k, "$") {
				delete(x, k)
				continue
			}
			x[k] = dropDirectives(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropDirectives(e)
		}
	}
	return v
}

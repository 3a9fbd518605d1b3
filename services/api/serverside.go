package api

import (
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/admission"
)

// serverSideApply merges an apply configuration (application/apply-patch+yaml) into the
// object as the request's field manager (package apply) and stores the result as an
// update; an object that does not exist yet is created from it. Fields another manager
// owns are a 409 Conflict unless force=true; fields the kind does not have are a 422.
func (s *server) serverSideApply(c echo.Context, t target) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	var config map[string]any
	if err := yaml.Unmarshal(body, &config); err != nil || config == nil {
		return badRequest("error decoding YAML: the apply configuration is not an object: %v", err)
	}
	if err := identify(config, &t); err != nil {
		return err
	}
	if errs := unknownFields(t, config); len(errs) > 0 {
		return admission.Invalid(schema.GroupKind{Group: t.Kind.Group, Kind: t.Kind.Kind}, t.Name, errs)
	}
	kind := schema.FromAPIVersionAndKind(t.apiVersion(), t.Kind.Kind)
	hub := schema.GroupVersion{Group: t.Kind.Group, Version: t.Kind.Version}
	// validatePatchOptions accepted the value as kube-apiserver does (strconv.ParseBool).
	force, _ := strconv.ParseBool(c.QueryParam("force"))
	for attempt := 1; ; attempt++ {
		rec, live, found, err := s.specs.live(c.Request().Context(), t)
		if err != nil {
			return err
		}
		if found {
			t.fromHub(live)
		} else {
			if err := s.authorize(userOf(c), t, "create"); err != nil {
				return err
			}
			live = map[string]any{"apiVersion": t.apiVersion(), "kind": t.Kind.Kind, "metadata": map[string]any{}}
		}
		merged, err := s.fields.Apply(kind, hub, live, config, c.QueryParam("fieldManager"), force)
		if err != nil {
			if _, ok := err.(apierrors.APIStatus); ok {
				return err
			}
			return unprocessable("the apply configuration does not apply: " + err.Error())
		}
		if !found {
			err := s.createAs(c, t, merged)
			if !apierrors.IsAlreadyExists(err) || attempt == staleAttempts {
				return err
			}
			continue // created meanwhile by another writer: apply to it
		}
		if rv := metaString(config, "resourceVersion"); rv != "" {
			metadata(merged)["resourceVersion"] = rv // the client's precondition
		}
		retry, err := s.replaceFrom(c, t, merged, rec)
		if !retry || attempt == staleAttempts {
			return err
		}
	}
}

// unknownFields names the configuration's fields that t's kind does not have: an apply
// cannot merge what it cannot type, so these are refused whatever fieldValidation says.
func unknownFields(t target, config map[string]any) field.ErrorList {
	hub, err := normalize(config)
	if err != nil {
		return field.ErrorList{field.Invalid(nil, nil, err.Error())}
	}
	unknown := t.toHub(hub)                        // named in the request's version already
	more, _ := model.CheckSchema(t.Kind.Kind, hub) // the rest of the schema is admission's, on the merged object
	if rename := t.fieldPaths(); rename != nil {
		for i, path := range more {
			more[i] = rename(path)
		}
	}
	var errs field.ErrorList
	for _, path := range append(unknown, more...) {
		errs = append(errs, field.Invalid(field.NewPath(strings.TrimPrefix(path, ".")), nil, "unknown field: it is not part of the schema"))
	}
	return errs
}

// Package admission runs api-rules §5 on every create and update before it is stored:
// schema (and unknown fields), defaulting, validation, with the model's rules per kind.
package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/auth"
)

// Request is one create or update on its way through admission. Obj is changed in
// place (pruned, defaulted); Old is the stored object on update, nil on create.
type Request struct {
	Kind            model.Kind
	Name, Namespace string
	Obj, Old        map[string]any
	User            auth.User
	Privileged      bool
	FieldValidation string // Strict | Warn (default) | Ignore, as Kubernetes
	DryRun          bool
	Warnings        []string

	// Unknown are fields the request's version does not know, already removed by the
	// conversion to the hub; FieldPaths renders hub field paths in that version's names
	// (nil when the request is in the hub version).
	Unknown    []string
	FieldPaths func(string) string
}

func (r *Request) create() bool { return r.Old == nil }

func (r *Request) groupKind() schema.GroupKind {
	return schema.GroupKind{Group: r.Kind.Group, Kind: r.Kind.Kind}
}

// defaulter is a kind's stage 2: it may change r.Obj, or deny with one field error (403).
type defaulter func(ctx context.Context, r *Request) *field.Error

// validator is a kind's stage 3: every rule's errors, collected (422).
type validator func(ctx context.Context, r *Request) field.ErrorList

// Admission runs api-rules §5.1 in order: schema → defaulting → validation. Nothing is
// stored when any stage fails.
type Admission struct {
	rm         Reader
	defaulters map[string]defaulter
	validators map[string]validator
	// deleting are the rules that hold even for updates of an object being deleted.
	deleting map[string]validator
}

// Admit admits r, changing r.Obj and r.Warnings, or answers the Status that refuses it.
func (a *Admission) Admit(ctx context.Context, r *Request) error {
	err := a.admitHub(ctx, r)
	renameWarnings(r.Warnings, r.FieldPaths)
	return renameStatus(err, r.FieldPaths)
}

func (a *Admission) admitHub(ctx context.Context, r *Request) error {
	if err := a.checkSchema(r); err != nil {
		return err
	}
	if err := dataSizeError(r); err != nil {
		return err
	}
	model.ApplyDefaults(r.Kind.Kind, r.Obj) // D1: schema defaults
	if d := a.defaulters[r.Kind.Kind]; d != nil {
		if ferr := d(ctx, r); ferr != nil {
			if ferr.Type == field.ErrorTypeInternal {
				return fmt.Errorf("defaulting %s: %w", r.Kind.Kind, ferr)
			}
			return denied(r.groupKind(), r.Name, ferr)
		}
	}
	if !r.create() && metaString(r.Old, "deletionTimestamp") != "" {
		return a.validate(ctx, r, a.deleting) // §5.2: updates of an object being deleted skip stage 3, but for these
	}
	if !skipsValidation(r) {
		if err := a.validate(ctx, r, a.validators); err != nil {
			return err
		}
	}
	return a.checkQuota(ctx, r)
}

// skipsValidation: the skip-validation annotation is honoured only for privileged callers
// (§5.2); quotas hold for them too.
func skipsValidation(r *Request) bool {
	ann, _ := meta(r.Obj)["annotations"].(map[string]any)
	return r.Privileged && ann[model.AnnotationSkipValidation] != nil
}

// validate is stage 3 with the kind's validator from rules, if it has one.
func (a *Admission) validate(ctx context.Context, r *Request, rules map[string]validator) error {
	v := rules[r.Kind.Kind]
	if v == nil {
		return nil
	}
	errs := v(ctx, r)
	for _, e := range errs {
		if e.Type == field.ErrorTypeInternal { // a lookup failed: the store's fault, not the caller's
			return fmt.Errorf("validating %s: %w", r.Kind.Kind, e)
		}
	}
	if len(errs) > 0 {
		return Invalid(r.groupKind(), r.Name, errs)
	}
	return nil
}

// checkSchema is stage 1: object metadata, the kind's OpenAPI schema, and unknown fields
// as the request's fieldValidation asks.
func (a *Admission) checkSchema(r *Request) error {
	mode := r.FieldValidation
	switch mode {
	case "":
		mode = "Warn"
	case "Strict", "Warn", "Ignore":
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("fieldValidation must be one of Strict, Warn or Ignore, not %q", mode))
	}
	errs := metadataErrors(r)
	unknown, schemaErrs := model.CheckSchema(r.Kind.Kind, r.Obj)
	unknown = append(r.Unknown, unknown...)
	errs = append(errs, schemaErrs...)
	for _, path := range unknown {
		path = strings.TrimPrefix(path, ".")
		switch mode {
		case "Strict":
			errs = append(errs, field.Invalid(field.NewPath(path), nil, "unknown field: it is not part of the schema"))
		case "Warn":
			r.Warnings = append(r.Warnings, fmt.Sprintf("unknown field %q", path))
		}
	}
	if len(errs) > 0 {
		return Invalid(r.groupKind(), r.Name, errs)
	}
	return nil
}

// metadataErrors applies Kubernetes' own object-metadata rules: names (DNS subdomain;
// DNS label for namespaces), label and annotation syntax, finalizers, owner references.
func metadataErrors(r *Request) field.ErrorList {
	raw, err := json.Marshal(r.Obj["metadata"])
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), nil, err.Error())}
	}
	var meta metav1.ObjectMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), nil, err.Error())}
	}
	nameFn := apimachineryvalidation.NameIsDNSSubdomain
	if r.Kind.Kind == "Namespace" {
		nameFn = apimachineryvalidation.ValidateNamespaceName
	}
	errs := apimachineryvalidation.ValidateObjectMeta(&meta, r.Kind.Namespaced, nameFn, field.NewPath("metadata"))
	return append(errs, finalizersOfDeleting(r.Old, meta.Finalizers)...)
}

// finalizersOfDeleting refuses, as Kubernetes' metadata update rules do, finalizers an
// update adds to an object being deleted (old): they would hold its deletion open for good.
func finalizersOfDeleting(old map[string]any, finalizers []string) field.ErrorList {
	if metaString(old, "deletionTimestamp") == "" {
		return nil
	}
	had := map[string]bool{}
	if list, ok := meta(old)["finalizers"].([]any); ok {
		for _, f := range list {
			if s, ok := f.(string); ok {
				had[s] = true
			}
		}
	}
	var added []string
	for _, f := range finalizers {
		if !had[f] {
			added = append(added, f)
		}
	}
	if len(added) == 0 {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("metadata", "finalizers"),
		fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %q", added))}
}

// meta is an object's metadata, nil when it has none.
func meta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	return m
}

func metaString(obj map[string]any, key string) string {
	s, _ := meta(obj)[key].(string)
	return s
}

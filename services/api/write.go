package api

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/services/api/admission"
	"github.com/vmop/vmop/services/api/readmodel"
)

func (s *server) create(c echo.Context, t target) error {
	obj, err := decodeObject(c, t)
	if err != nil {
		return err
	}
	if err := identify(obj, &t); err != nil {
		return err
	}
	return s.createAs(c, t, obj)
}

// createAs is the shared tail of POST and of an apply that creates: admission, the
// field manager recorded, the object appended.
func (s *server) createAs(c echo.Context, t target, obj map[string]any) error {
	c.Set(auditNameKey, t.Name)
	dry, err := dryRun(c)
	if err != nil {
		return err
	}
	r := &admission.Request{Kind: t.Kind, Name: t.Name, Namespace: t.Namespace, Obj: obj, User: userOf(c),
		Privileged: s.auth.Privileged(userOf(c)), FieldValidation: c.QueryParam("fieldValidation"), DryRun: dry,
		Unknown: t.toHub(obj), FieldPaths: t.fieldPaths()}
	if err := s.recordManager(c, t, nil, obj); err != nil {
		return err
	}
	seq, err := s.createObject(c.Request().Context(), t, r)
	setWarnings(c, r.Warnings)
	if err != nil {
		return err
	}
	if r.DryRun {
		return writeHubObject(c, t, http.StatusCreated, obj)
	}
	return s.respondStored(c, t, seq, http.StatusCreated)
}

// createObject admits r.Obj as a new object and appends it; the returned sequence is the
// object's first record (0 on a dry run).
func (s *server) createObject(ctx context.Context, t target, r *admission.Request) (uint64, error) {
	if t.Kind.Namespaced {
		ns, err := s.rm.Get("namespaces", "", t.Namespace)
		if err != nil {
			return 0, notFound(namespaceTarget(t.Namespace).gr(), t.Namespace)
		}
		if ns.DeletionRequested {
			return 0, namespaceTerminating(t)
		}
	}
	if err := s.admit.Admit(ctx, r); err != nil {
		return 0, err
	}
	rec, _, found, err := s.specs.live(ctx, t)
	if err != nil {
		return 0, err
	}
	if found {
		return 0, apierrors.NewAlreadyExists(t.gr(), t.Name)
	}
	obj := r.Obj
	delete(obj, "status")
	m := metadata(obj)
	for _, k := range []string{"resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"} {
		delete(m, k)
	}
	m["uid"] = uuid.NewString()
	m["creationTimestamp"] = time.Now().UTC().Format(time.RFC3339)
	m["generation"] = 1
	if err := s.checkSize(obj, 0); err != nil {
		return 0, err
	}
	if r.DryRun {
		return 0, nil
	}
	seq, err := s.specs.append(ctx, t, events.OpPut, obj, rec.Seq)
	if apierrors.IsConflict(err) {
		// Lost to another create of the name (through another gateway, or at once through
		// this one): that is AlreadyExists, which create-if-absent clients look for.
		if _, _, found, lerr := s.specs.live(ctx, t); lerr == nil && found {
			return 0, apierrors.NewAlreadyExists(t.gr(), t.Name)
		}
	}
	return seq, err
}

// identify checks the body's type and name against the URL and fills in what the URL
// implies (namespace, a generated name).
func identify(obj map[string]any, t *target) error {
	if av, _ := obj["apiVersion"].(string); av != t.apiVersion() {
		return badRequest("the API version in the data (%s) does not match the expected API version (%s)", av, t.apiVersion())
	}
	if k, _ := obj["kind"].(string); k != t.Kind.Kind {
		return badRequest("the kind in the data (%s) does not match the expected kind (%s)", k, t.Kind.Kind)
	}
	m := metadata(obj)
	name, _ := m["name"].(string)
	if name == "" {
		if gen, _ := m["generateName"].(string); gen != "" {
			name = gen + randomSuffix()
			m["name"] = name
		}
	}
	if t.Name != "" && name != t.Name {
		return badRequest("the name of the object (%s) does not match the name on the URL (%s)", name, t.Name)
	}
	t.Name = name
	ns, _ := m["namespace"].(string)
	switch {
	case !t.Kind.Namespaced:
		delete(m, "namespace")
	case ns != "" && ns != t.Namespace:
		return badRequest("the namespace of the object (%s) does not match the namespace on the request (%s)", ns, t.Namespace)
	default:
		m["namespace"] = t.Namespace
	}
	return nil
}

func (s *server) update(c echo.Context, t target) error {
	obj, err := decodeObject(c, t)
	if err != nil {
		return err
	}
	if t.Subresource == "status" {
		return s.writeStatus(c, t, obj)
	}
	if err := identify(obj, &t); err != nil {
		return err
	}
	return s.replace(c, t, obj)
}

// replace is the shared tail of PUT and PATCH: conversion to the hub version, CAS against
// the client's resourceVersion, admission against the stored object, system metadata
// carried over, a no-op stores nothing, and generation counts content changes.
func (s *server) replace(c echo.Context, t target, obj map[string]any) error {
	dry, err := dryRun(c)
	if err != nil {
		return err
	}
	return s.replaceAs(c, t, obj, dry)
}

// replaceAs is replace with the dry run decided by the caller (an action reads it from its
// options body too).
func (s *server) replaceAs(c echo.Context, t target, obj map[string]any, dry bool) error {
	rec, old, found, err := s.specs.live(c.Request().Context(), t)
	if err != nil {
		return err
	}
	if !found {
		return notFound(t.gr(), t.Name)
	}
	return s.replaceOver(c, t, obj, dry, rec, old)
}

// replaceOver is replaceAs over rec, the object's latest record as the caller read it, and
// old, its decoded body; the append's compare-and-swap on rec makes a write since then a
// conflict.
func (s *server) replaceOver(c echo.Context, t target, obj map[string]any, dry bool, rec events.SpecRecord, old map[string]any) error {
	unknown := t.toHub(obj)
	ctx := c.Request().Context()
	if uid := metaString(obj, "uid"); uid != "" && uid != metaString(old, "uid") {
		// Another incarnation's object (a manifest saved from one deleted since), or a uid
		// given as a precondition: kube-apiserver refuses both.
		if c.Request().Method == http.MethodPatch {
			return apierrors.NewInvalid(schema.GroupKind{Group: t.Kind.Group, Kind: t.Kind.Kind}, t.Name, field.ErrorList{
				field.Invalid(field.NewPath("metadata", "uid"), uid, "field is immutable")})
		}
		precondition := types.UID(uid)
		return checkPreconditions(t, &metav1.Preconditions{UID: &precondition}, old, rec.Seq)
	}
	if rv := metaString(obj, "resourceVersion"); rv != "" {
		a, ok := specSeqOf(rv)
		if !ok {
			return badRequest("metadata.resourceVersion: invalid value %q", rv)
		}
		if rec.Seq != a { // older, or never the object's (a made-up or future version)
			return staleConflict(t)
		}
	}
	t.restore(obj, old)
	status := s.storedStatus(t)
	r := &admission.Request{Kind: t.Kind, Name: t.Name, Namespace: t.Namespace, Obj: obj, Old: withStatus(status, old), User: userOf(c),
		Privileged: s.auth.Privileged(userOf(c)), FieldValidation: c.QueryParam("fieldValidation"), DryRun: dry,
		Unknown: unknown, FieldPaths: t.fieldPaths()}
	if err := s.admit.Admit(ctx, r); err != nil {
		return err
	}
	setWarnings(c, r.Warnings)
	delete(obj, "status")
	m, om := metadata(obj), metadata(old)
	for _, k := range []string{"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"} {
		if v, ok := om[k]; ok {
			m[k] = v
		} else {
			delete(m, k)
		}
	}
	delete(m, "resourceVersion")
	if err := s.recordManager(c, t, old, obj); err != nil {
		return err
	}
	obj, err := normalize(obj)
	if err != nil {
		return fmt.Errorf("normalize %s: %w", t.ref(), err)
	}
	if !sameContent(obj, old) {
		metadata(obj)["generation"] = generation(old) + 1
	}
	unchanged := equalObjects(obj, old)
	if !unchanged {
		if err := s.checkSize(obj, len(status)); err != nil {
			return err
		}
	}
	if dry {
		return s.writeDryRun(c, t, obj, rec.Seq)
	}
	if unchanged {
		return s.respondStored(c, t, rec.Seq, http.StatusOK)
	}
	seq, err := s.specs.append(ctx, t, events.OpPut, obj, rec.Seq)
	if err != nil {
		return err
	}
	return s.respondStored(c, t, seq, http.StatusOK)
}

func (s *server) delete(c echo.Context, t target) error {
	ctx := c.Request().Context()
	dry, pre, err := deleteOptions(c)
	if err != nil {
		return err
	}
	rec, obj, found, err := s.specs.live(ctx, t)
	if err != nil {
		return err
	}
	if !found {
		return notFound(t.gr(), t.Name)
	}
	if err := checkPreconditions(t, pre, obj, rec.Seq); err != nil {
		return err
	}
	m := metadata(obj)
	if _, deleting := m["deletionTimestamp"]; deleting {
		return s.respondStored(c, t, rec.Seq, http.StatusOK)
	}
	if t.Kind.IsNamespace() && protectedNamespaces[t.Name] {
		return apierrors.NewForbidden(t.gr(), t.Name, fmt.Errorf("this namespace may not be deleted"))
	}
	if dry {
		return s.writeDryRun(c, t, obj, rec.Seq)
	}
	seq, err := s.specs.startDeletion(ctx, t, rec, obj)
	switch {
	case err != nil:
		return err
	case seq == 0: // gone at once, as it was
		return writeHubObject(c, t, http.StatusOK, obj)
	}
	return s.respondStored(c, t, seq, http.StatusOK)
}

// terminating: the namespace is being deleted.
func (s *server) terminating(namespace string) bool {
	ns, err := s.rm.Get("namespaces", "", namespace)
	return err == nil && ns.DeletionRequested
}

// namespaceTerminating refuses a create in a namespace being deleted, as Kubernetes does:
// its content is being deleted, and the namespace goes once it is empty.
func namespaceTerminating(t target) error {
	msg := fmt.Sprintf("unable to create new content in namespace %s because it is being terminated", t.Namespace)
	err := apierrors.NewForbidden(t.gr(), t.Name, errors.New(msg))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes,
		metav1.StatusCause{Type: corev1.NamespaceTerminatingCause, Message: msg, Field: "metadata.namespace"})
	return err
}

// protectedNamespaces may not be deleted, as in Kubernetes: objects without a namespace
// go to default.
var protectedNamespaces = map[string]bool{metav1.NamespaceDefault: true, metav1.NamespaceSystem: true, metav1.NamespacePublic: true}

// storedNotFolded answers a write that was stored (at seq) but that the read model did not
// fold in time: 504 without Retry-After, since client-go resends a request answered with
// one, and the write must not be made twice (a generateName create, a JSON patch adding to
// a list); the client reads the object to see it.
func storedNotFolded(t target, seq uint64) error {
	return apierrors.NewTimeoutError(fmt.Sprintf("%s was stored (sequence %d), but the read model has not caught up with it yet: read it again", t.ref(), seq), 0)
}

// writeDryRun answers a dry-run write of the object whose record is seq with the object as
// it would be stored and, as they are now, what the store keeps beside its spec record:
// its status and resourceVersion (asRead). kube-apiserver's dry run answers them too, so
// kubectl diff shows only the change.
func (s *server) writeDryRun(c echo.Context, t target, obj map[string]any, seq uint64) error {
	s.asRead(t, seq, obj)
	return writeHubObject(c, t, http.StatusOK, obj)
}

// respondStored answers with the object as the read model holds it once it has folded
// seq, so a read right after this response reflects the write (read-your-writes).
func (s *server) respondStored(c echo.Context, t target, seq uint64, code int) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 10*time.Second)
	defer cancel()
	if err := s.rm.WaitSpec(ctx, seq); err != nil {
		return storedNotFolded(t, seq)
	}
	obj, err := s.rm.Get(t.Kind.Plural, t.Namespace, t.Name)
	if errors.Is(err, readmodel.ErrNotFound) {
		// A later record removed it: the write took the last finalizer off an object being
		// deleted, which then went at once. kube-apiserver answers such a write with the
		// object as written, and so does this, from the write's record.
		var rec events.SpecRecord
		if rec, err = events.SpecAt(ctx, s.specs.js, t.ref(), seq); err == nil {
			obj = readmodel.Object{JSON: rec.Body, SpecSeq: seq}
		}
	}
	if err != nil {
		return fmt.Errorf("read back %s: %w", t.ref(), err)
	}
	served, err := s.reveal(ctx, t.Kind.Plural, obj.JSON, obj.SpecSeq)
	if err != nil {
		return err
	}
	return writeObject(c, t, code, served)
}

func namespaceTarget(name string) target {
	t, _ := parseTarget("/api/v1/namespaces/" + name)
	return t
}

func randomSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	var sb strings.Builder
	for _, x := range b {
		sb.WriteByte(alphabet[int(x)%len(alphabet)])
	}
	return sb.String()
}

package api

import (
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Every write records its field manager in metadata.managedFields (package apply), so
// server-side apply knows who owns what whichever way a field was last written.

// managerName is the field manager a write is recorded under: the fieldManager parameter,
// else the client's User-Agent up to its first "/", as kube-apiserver names it.
func managerName(r *http.Request) string {
	if m := r.URL.Query().Get("fieldManager"); m != "" {
		return m
	}
	agent, _, _ := strings.Cut(r.UserAgent(), "/")
	var b strings.Builder
	for _, c := range agent {
		if !unicode.IsPrint(c) {
			continue
		}
		if b.Len()+utf8.RuneLen(c) > metav1validation.FieldManagerMaxLength {
			break
		}
		b.WriteRune(c)
	}
	return b.String()
}

// recordManager sets obj's metadata.managedFields: the request's manager owns what it
// changed from old (nil on create), in the version the request addressed. Both objects
// are in the hub version. An apply has already recorded its manager in the merge.
func (s *server) recordManager(c echo.Context, t target, old, obj map[string]any) error {
	if isApply(c.Request()) {
		return nil
	}
	kind := schema.FromAPIVersionAndKind(t.apiVersion(), t.Kind.Kind)
	hub := schema.GroupVersion{Group: t.Kind.Group, Version: t.Kind.Version}
	out, err := s.fields.Update(kind, hub, old, obj, managerName(c.Request()))
	if err != nil {
		return err
	}
	if mf, ok := metadata(out)["managedFields"]; ok {
		metadata(obj)["managedFields"] = mf
	} else {
		delete(metadata(obj), "managedFields")
	}
	return nil
}

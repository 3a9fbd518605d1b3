package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// vmop runs no pods, but kubectl asks for them: `kubectl describe pvc` lists a namespace's
// pods to print which use the claim. The truthful answer is an empty list (and no pod by
// any name), not an error that stops describe. Pods are no kind vmop serves otherwise:
// not in discovery, no writes.

var podsResource = schema.GroupResource{Resource: "pods"}

// listPods answers GET /api/v1/pods and /api/v1/namespaces/<ns>/pods.
func (s *server) listPods(c echo.Context) error {
	if err := s.mayReadPods(c, c.Param("namespace")); err != nil {
		return err
	}
	list := &corev1.PodList{Items: []corev1.Pod{}}
	list.Kind, list.APIVersion = "PodList", "v1"
	list.ResourceVersion = s.rm.RV()
	if wantsProtobuf(c) {
		return writeProtobuf(c, http.StatusOK, list)
	}
	return c.JSON(http.StatusOK, list)
}

// getPod answers GET /api/v1/namespaces/<ns>/pods/<name>: there is none.
func (s *server) getPod(c echo.Context) error {
	if err := s.mayReadPods(c, c.Param("namespace")); err != nil {
		return err
	}
	return apierrors.NewNotFound(podsResource, c.Param("name"))
}

// mayReadPods applies the read rules of every namespaced kind: ordinary users read only
// in their namespaces.
func (s *server) mayReadPods(c echo.Context, ns string) error {
	u := userOf(c)
	switch {
	case s.auth.privileged(u):
		return nil
	case ns == "":
		return apierrors.NewForbidden(podsResource, "", fmt.Errorf("User %q cannot list resource \"pods\" at the cluster scope", u.Name))
	case !s.auth.mayAccessNamespace(u, ns):
		return apierrors.NewForbidden(podsResource, "", fmt.Errorf("User %q cannot list resource \"pods\" in the namespace %q", u.Name, ns))
	}
	return nil
}

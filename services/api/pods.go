package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/auth"
)

// vmop runs no pods, but kubectl asks for them: `kubectl describe pvc` lists a namespace's
// pods to print which use the claim. The truthful answer is an empty list (and no pod by
// any name), not an error that stops describe. Pods are no kind vmop serves otherwise:
// not in discovery, no writes.

// podKind is how authorization sees pods: a namespaced core kind.
var podKind = model.Kind{Version: model.VersionCore, Kind: "Pod", Plural: "pods", Namespaced: true}

// listPods answers GET /api/v1/pods and /api/v1/namespaces/<ns>/pods.
func (s *server) listPods(c echo.Context) error {
	access := auth.Access{Kind: podKind, Namespace: c.Param("namespace"), Verb: "list"}
	if err := s.auth.Authorize(userOf(c), access); err != nil {
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
	access := auth.Access{Kind: podKind, Namespace: c.Param("namespace"), Name: c.Param("name"), Verb: "get"}
	if err := s.auth.Authorize(userOf(c), access); err != nil {
		return err
	}
	return apierrors.NewNotFound(schema.GroupResource{Resource: podKind.Plural}, c.Param("name"))
}

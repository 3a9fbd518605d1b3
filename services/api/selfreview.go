package api

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/vmop/vmop/services/api/auth"
)

// The self reviews let a caller ask who it is (kubectl auth whoami) and what it may do
// (kubectl auth can-i, --list); they are answered from the gateway's own authentication and
// authorization, never stored. Like kube-apiserver they are create-only, in JSON or protobuf.

// selfReview is one review resource: where it is served and how it is answered.
type selfReview struct {
	gv     schema.GroupVersion
	plural string
	kind   string
	answer func(s *server, u auth.User, review runtime.Object) error // fills in the review's status
}

var selfReviews = []selfReview{
	{authenticationv1.SchemeGroupVersion, "selfsubjectreviews", "SelfSubjectReview", func(s *server, u auth.User, r runtime.Object) error {
		r.(*authenticationv1.SelfSubjectReview).Status.UserInfo = authenticationv1.UserInfo{Username: u.Name, Groups: u.Groups}
		return nil
	}},
	{authorizationv1.SchemeGroupVersion, "selfsubjectaccessreviews", "SelfSubjectAccessReview", func(s *server, u auth.User, r runtime.Object) error {
		return s.answerAccessReview(u, r.(*authorizationv1.SelfSubjectAccessReview))
	}},
	{authorizationv1.SchemeGroupVersion, "selfsubjectrulesreviews", "SelfSubjectRulesReview", func(s *server, u auth.User, r runtime.Object) error {
		return s.answerRulesReview(u, r.(*authorizationv1.SelfSubjectRulesReview))
	}},
}

var reviewScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{authenticationv1.AddToScheme, authorizationv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("register the review kinds: %v", err))
		}
	}
	return s
}()

var reviewCodecs = serializer.NewCodecFactory(reviewScheme)

// selfReviewAt finds the review a path names: /apis/<group>/<version>/<plural>.
func selfReviewAt(path string) (selfReview, bool) {
	for _, r := range selfReviews {
		if strings.Trim(path, "/") == "apis/"+r.gv.Group+"/"+r.gv.Version+"/"+r.plural {
			return r, true
		}
	}
	return selfReview{}, false
}

// serveSelfReview answers a POST of a review with the review and its status (201).
func (s *server) serveSelfReview(c echo.Context, r selfReview) error {
	gr := schema.GroupResource{Group: r.gv.Group, Resource: r.plural}
	if c.Request().Method != http.MethodPost {
		return apierrors.NewMethodNotSupported(gr, c.Request().Method)
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	gvk := r.gv.WithKind(r.kind)
	into, err := reviewScheme.New(gvk)
	if err != nil {
		return fmt.Errorf("new %s: %w", r.kind, err)
	}
	obj, got, err := reviewCodecs.UniversalDeserializer().Decode(body, &gvk, into)
	if err != nil {
		return badRequest("the request body is not a valid %s: %v", r.kind, err)
	}
	if *got != gvk {
		return badRequest("the kind in the data (%s) does not match the expected kind (%s)", got.Kind, r.kind)
	}
	if err := r.answer(s, userOf(c), obj); err != nil {
		return err
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	mediaType := runtime.ContentTypeJSON
	if wantsProtobuf(c) {
		mediaType = runtime.ContentTypeProtobuf
	}
	info, _ := runtime.SerializerInfoForMediaType(reviewCodecs.SupportedMediaTypes(), mediaType)
	var buf bytes.Buffer
	if err := info.Serializer.Encode(obj, &buf); err != nil {
		return fmt.Errorf("encode %s: %w", r.kind, err)
	}
	return c.Blob(http.StatusCreated, mediaType, buf.Bytes())
}

// selfReviewGroups are the review groups for /apis.
func selfReviewGroups() []metav1.APIGroup {
	var out []metav1.APIGroup
	for _, r := range selfReviews {
		v := metav1.GroupVersionForDiscovery{GroupVersion: r.gv.String(), Version: r.gv.Version}
		if n := len(out); n > 0 && out[n-1].Name == r.gv.Group {
			continue
		}
		out = append(out, metav1.APIGroup{Name: r.gv.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
	}
	return out
}

// selfReviewResources lists the reviews of a group-version for its discovery document.
func selfReviewResources(group, version string) []metav1.APIResource {
	var out []metav1.APIResource
	for _, r := range selfReviews {
		if r.gv.Group == group && r.gv.Version == version {
			out = append(out, metav1.APIResource{Name: r.plural, Kind: r.kind, Verbs: metav1.Verbs{"create"}})
		}
	}
	return out
}

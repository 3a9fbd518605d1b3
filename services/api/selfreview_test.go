package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

const accessReviews = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"

// A SelfSubjectAccessReview in protobuf (kubectl's typed client) is answered in protobuf;
// in JSON, in JSON; a review asking nothing, or not a POST, is refused; discovery lists the
// review groups.
func TestSelfSubjectAccessReview(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	scheme := runtime.NewScheme()
	if err := authorizationv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	codec := protobuf.NewSerializer(scheme, scheme)
	review := func(ra authorizationv1.ResourceAttributes) []byte {
		r := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra}}
		r.SetGroupVersionKind(authorizationv1.SchemeGroupVersion.WithKind("SelfSubjectAccessReview"))
		var buf bytes.Buffer
		if err := codec.Encode(r, &buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	pb := []string{"Content-Type", protobufType, "Accept", protobufType + ", application/json"}
	vms := authorizationv1.ResourceAttributes{Namespace: "my-namespace", Verb: "create", Group: "vmoperator.vmware.com", Resource: "virtualmachines"}
	elsewhere := vms
	elsewhere.Namespace = "kube-system"
	for _, tt := range []struct {
		ra      authorizationv1.ResourceAttributes
		allowed bool
	}{{vms, true}, {elsewhere, false}} {
		code, data, header := g.doHeader("POST", accessReviews, userToken, review(tt.ra), pb...)
		if code != http.StatusCreated || header.Get("Content-Type") != protobufType {
			t.Fatalf("protobuf review: %d %s %q", code, header.Get("Content-Type"), data)
		}
		var got authorizationv1.SelfSubjectAccessReview
		if _, _, err := codec.Decode(data, nil, &got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed != tt.allowed || (!tt.allowed && !strings.Contains(got.Status.Reason, `namespace "kube-system"`)) {
			t.Errorf("user may %s %s in %s: %+v, want allowed %v with the reason", tt.ra.Verb, tt.ra.Resource, tt.ra.Namespace, got.Status, tt.allowed)
		}
	}

	code, data := g.do("POST", accessReviews, adminToken, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview",
		"spec":{"nonResourceAttributes":{"verb":"get","path":"/metrics"}}}`)
	if code != http.StatusCreated || field(decode(t, data), "status", "allowed") != true {
		t.Errorf("admin get /metrics: %d %s, want allowed", code, data)
	}
	if code, data := g.do("POST", accessReviews, adminToken, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{}}`); code != http.StatusBadRequest {
		t.Errorf("review without attributes: %d %s, want 400", code, data)
	}
	if code, data := g.do("GET", accessReviews, adminToken, nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET of the reviews: %d %s, want 405", code, data)
	}

	_, data = g.do("GET", "/apis", adminToken, nil)
	for _, group := range []string{"authentication.k8s.io", "authorization.k8s.io"} {
		if !strings.Contains(string(data), `"name":"`+group+`"`) {
			t.Errorf("/apis does not list %s: %s", group, data)
		}
	}
	code, data = g.do("GET", "/apis/authorization.k8s.io/v1", adminToken, nil)
	var list metav1.APIResourceList
	if err := json.Unmarshal(data, &list); code != http.StatusOK || err != nil || len(list.APIResources) != 2 {
		t.Errorf("/apis/authorization.k8s.io/v1: %d %s (%v), want the two self reviews", code, data, err)
	}
}

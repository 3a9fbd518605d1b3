package api_test

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// TestPodsAreNone: vmop runs no pods, and says so as kube-apiserver would for a namespace
// without any (kubectl describe pvc lists them): an empty list, in protobuf too, a get 404;
// nobody may create one.
func TestPodsAreNone(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	const pods = "/api/v1/namespaces/my-namespace/pods"
	code, body, header := g.doHeader("GET", pods+"?limit=500", userToken, nil, "Accept", protobufType+", application/json")
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var list corev1.PodList
	if code != http.StatusOK || header.Get("Content-Type") != protobufType {
		t.Fatalf("list pods: %d %s %s", code, header.Get("Content-Type"), body)
	}
	if _, _, err := protobuf.NewSerializer(scheme, scheme).Decode(body, nil, &list); err != nil || len(list.Items) != 0 || list.ResourceVersion == "" {
		t.Errorf("pods = %+v, %v; want an empty list with a resourceVersion", list, err)
	}
	for _, c := range []struct {
		what, method, path, token string
		code                      int
	}{
		{"get", "GET", pods + "/web", userToken, http.StatusNotFound},
		{"create", "POST", pods, adminToken, http.StatusMethodNotAllowed},
		{"another's namespace", "GET", "/api/v1/namespaces/kube-system/pods", userToken, http.StatusForbidden},
	} {
		if code, body := g.do(c.method, c.path, c.token, `{"metadata":{"name":"web"}}`); code != c.code {
			t.Errorf("%s: %d %s, want %d", c.what, code, body, c.code)
		}
	}
}

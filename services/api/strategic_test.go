package api_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

func dynamicClient(t *testing.T, g *gateway, token string) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(&rest.Config{Host: g.URL, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: g.certs.CAFile}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestStrategicMergePatch: a strategic merge patch computed by client-go from a Secret's
// old and new forms (labels added, a finalizer added: $setElementOrder) keeps the other
// labels and list entries, as kube-apiserver merges it; a custom kind answers 415.
func TestStrategicMergePatch(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	client := dynamicClient(t, g, userToken).Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace("my-namespace")
	ctx := context.Background()

	old := corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "labelled", Labels: map[string]string{"keep": "me", "tier": "one"}, Finalizers: []string{"example.com/first"}},
		StringData: map[string]string{"k": "v"},
	}
	code, body := g.do("POST", secrets, userToken, old)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	modified := old.DeepCopy()
	modified.Labels["added"] = "too"
	modified.Labels["tier"] = "two"
	modified.Finalizers = append(modified.Finalizers, "example.com/second")
	patch := twoWayPatch(t, old, *modified)
	if !strings.Contains(string(patch), "$setElementOrder/finalizers") {
		t.Fatalf("client-go's patch lacks the directive this test is about: %s", patch)
	}
	got, err := client.Patch(ctx, "labelled", types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("strategic merge patch: %v", err)
	}
	if want := map[string]string{"keep": "me", "tier": "two", "added": "too"}; !maps.Equal(got.GetLabels(), want) {
		t.Errorf("labels %v, want %v", got.GetLabels(), want)
	}
	if want := []string{"example.com/first", "example.com/second"}; !slices.Equal(got.GetFinalizers(), want) {
		t.Errorf("finalizers %v, want %v", got.GetFinalizers(), want)
	}

	// Deleting one label and one finalizer the strategic way removes just those.
	removed := modified.DeepCopy()
	delete(removed.Labels, "added")
	removed.Finalizers = removed.Finalizers[1:]
	got, err = client.Patch(ctx, "labelled", types.StrategicMergePatchType, twoWayPatch(t, *modified, *removed), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("strategic merge patch removing entries: %v", err)
	}
	if want := map[string]string{"keep": "me", "tier": "two"}; !maps.Equal(got.GetLabels(), want) ||
		!slices.Equal(got.GetFinalizers(), []string{"example.com/second"}) {
		t.Errorf("after removal: labels %v finalizers %v", got.GetLabels(), got.GetFinalizers())
	}

	// A directive that cannot apply is 422 and stores nothing.
	before := specCount(t, g.js)
	_, err = client.Patch(ctx, "labelled", types.StrategicMergePatchType, []byte(`{"metadata":{"$patch":"bogus"}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
		t.Errorf("bad directive: %v, want 422 or 400", err)
	}
	if after := specCount(t, g.js); after != before {
		t.Errorf("a refused patch stored %d records", after-before)
	}

	// Custom kinds take no strategic merge patch, as CRDs in kube-apiserver.
	createClass(t, g)
	code, body = g.do("PATCH", classes+"/my-vm-class", adminToken, `{"metadata":{"labels":{"a":"b"}}}`,
		"Content-Type", "application/strategic-merge-patch+json")
	if code != http.StatusUnsupportedMediaType || !strings.Contains(string(body), "accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml") {
		t.Errorf("strategic merge patch of a custom kind: %d %s, want 415 listing the accepted types", code, body)
	}
}

func twoWayPatch(t *testing.T, from, to corev1.Secret) []byte {
	t.Helper()
	a, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(to)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strategicpatch.CreateTwoWayMergePatch(a, b, corev1.Secret{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

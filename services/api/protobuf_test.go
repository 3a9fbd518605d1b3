package api_test

import (
	"bytes"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

const protobufType = "application/vnd.kubernetes.protobuf"

// TestProtobufSecret: a Secret sent in Kubernetes protobuf, as kubectl's typed commands send
// it, is stored with its data and answered in protobuf when the client prefers it (also its
// errors, as a protobuf Status, and lists); a dry-run delete's protobuf DeleteOptions are read; a JSON client reads the same object as JSON; a protobuf body
// for a custom kind is 415 and stores nothing.
func TestProtobufSecret(t *testing.T) {
	js := newStreams(t)
	g := startGateway(t, js, t.TempDir())
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	codec := protobuf.NewSerializer(scheme, scheme)
	encode := func(obj runtime.Object) []byte {
		var buf bytes.Buffer
		if err := codec.Encode(obj, &buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	decodeAs := func(what string, data []byte, header http.Header, into runtime.Object) {
		t.Helper()
		if ct := header.Get("Content-Type"); ct != protobufType {
			t.Fatalf("%s: Content-Type %q, want %s: %s", what, ct, protobufType, data)
		}
		if _, _, err := codec.Decode(data, nil, into); err != nil {
			t.Fatalf("%s: decode protobuf answer: %v", what, err)
		}
	}
	secret := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "pb"},
		Data:       map[string][]byte{"k": []byte("v")},
		Type:       corev1.SecretTypeOpaque,
	}
	pb := []string{"Content-Type", protobufType, "Accept", protobufType + ", */*"}

	code, resp, header := g.doHeader("POST", secrets, userToken, encode(secret), pb...)
	if code != http.StatusCreated {
		t.Fatalf("create in protobuf: %d %s", code, resp)
	}
	var created corev1.Secret
	decodeAs("create", resp, header, &created)
	if string(created.Data["k"]) != "v" || created.Name != "pb" || created.Namespace != "my-namespace" || created.UID == "" {
		t.Fatalf("created Secret = %+v", created)
	}

	code, resp, header = g.doHeader("GET", secrets+"/pb", userToken, nil, "Accept", protobufType+", */*")
	if code != http.StatusOK {
		t.Fatalf("get in protobuf: %d %s", code, resp)
	}
	var got corev1.Secret
	decodeAs("get", resp, header, &got)
	if string(got.Data["k"]) != "v" || got.ResourceVersion == "" {
		t.Fatalf("got Secret = %+v", got)
	}

	code, resp = g.do("GET", secrets+"/pb", userToken, nil)
	if obj := decode(t, resp); code != http.StatusOK || field(obj, "data", "k") != "dg==" {
		t.Fatalf("get in JSON: %d %s", code, resp)
	}

	code, resp, header = g.doHeader("POST", secrets, userToken, encode(secret), pb...)
	var st metav1.Status
	decodeAs("duplicate create", resp, header, &st)
	if code != http.StatusConflict || st.Reason != metav1.StatusReasonAlreadyExists || st.Code != http.StatusConflict {
		t.Fatalf("duplicate create: %d %+v", code, st)
	}

	code, resp, header = g.doHeader("GET", secrets, userToken, nil, "Accept", protobufType+", application/json")
	var list corev1.SecretList
	decodeAs("list", resp, header, &list)
	if code != http.StatusOK || len(list.Items) != 1 || string(list.Items[0].Data["k"]) != "v" || list.ResourceVersion == "" {
		t.Fatalf("list in protobuf: %d %+v", code, list)
	}

	dry := encode(&metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}, DryRun: []string{metav1.DryRunAll}})
	if code, resp = g.do("DELETE", secrets+"/pb", userToken, dry, pb...); code != http.StatusOK {
		t.Fatalf("dry-run delete with protobuf DeleteOptions: %d %s", code, resp)
	}
	if code, resp = g.do("GET", secrets+"/pb", userToken, nil); code != http.StatusOK {
		t.Fatalf("a dry-run delete removed the Secret: %d %s", code, resp)
	}

	code, resp = g.do("POST", secrets, userToken, []byte("not protobuf"), pb...)
	if code != http.StatusBadRequest {
		t.Fatalf("malformed protobuf: %d %s", code, resp)
	}

	before := specCount(t, js)
	code, resp = g.do("POST", "/apis/vmoperator.vmware.com/v1alpha5/namespaces/my-namespace/virtualmachines", adminToken,
		encode(secret), "Content-Type", protobufType)
	if code != http.StatusUnsupportedMediaType {
		t.Fatalf("protobuf VirtualMachine: %d %s, want 415", code, resp)
	}
	if after := specCount(t, js); after != before {
		t.Fatalf("a refused body was stored: SPECS %d -> %d", before, after)
	}
}

// TestProtobufNamespaceActive: a Namespace created in protobuf is Active.
func TestProtobufNamespaceActive(t *testing.T) {
	g := startGateway(t, newStreams(t), t.TempDir())
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	codec := protobuf.NewSerializer(scheme, scheme)
	var buf bytes.Buffer
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	if err := codec.Encode(ns, &buf); err != nil {
		t.Fatal(err)
	}
	code, resp := g.do("POST", "/api/v1/namespaces", adminToken, buf.Bytes(), "Content-Type", protobufType)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, resp)
	}
	g.eventually("namespace team-a Active", func() bool {
		code, resp := g.do("GET", "/api/v1/namespaces/team-a", adminToken, nil)
		return code == http.StatusOK && field(decode(t, resp), "status", "phase") == "Active"
	})
}

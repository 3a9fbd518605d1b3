package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// Built-in kinds are spoken in Kubernetes protobuf too, as kube-apiserver does: kubectl's typed
// commands (create namespace, create secret, ...) send and ask for it. The rest of the gateway
// only sees JSON: a protobuf body becomes the JSON object the typed value marshals to, and an
// answer is the stored JSON read into the typed value and encoded. Custom kinds (the VM
// Operator groups) stay JSON-only, as CRDs are in kube-apiserver.

const mediaTypeProtobuf = runtime.ContentTypeProtobuf

// protobufScheme holds the typed values of the kinds served in protobuf, and the
// unversioned Status that errors are answered with.
var protobufScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(fmt.Sprintf("register core/v1: %v", err))
	}
	if err := eventsv1.AddToScheme(s); err != nil {
		panic(fmt.Sprintf("register events.k8s.io/v1: %v", err))
	}
	return s
}()

// protobufKinds are the served kinds spoken in protobuf, by apiVersion and kind; adding a
// built-in kind is one line (its group's AddToScheme above if new).
var protobufKinds = map[schema.GroupVersionKind]bool{
	corev1.SchemeGroupVersion.WithKind("Namespace"):             true,
	corev1.SchemeGroupVersion.WithKind("Secret"):                true,
	corev1.SchemeGroupVersion.WithKind("ConfigMap"):             true,
	corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"): true,
	corev1.SchemeGroupVersion.WithKind("ResourceQuota"):         true,
	corev1.SchemeGroupVersion.WithKind("Event"):                 true,
	corev1.SchemeGroupVersion.WithKind("Pod"):                   true,
	eventsv1.SchemeGroupVersion.WithKind("Event"):               true,
}

var protobufSerializer = protobuf.NewSerializer(protobufScheme, protobufScheme)

// speaksProtobuf reports whether t's kind is served in protobuf.
func (t target) speaksProtobuf() bool {
	return protobufKinds[schema.FromAPIVersionAndKind(t.apiVersion(), t.Kind.Kind)]
}

// isProtobuf reports whether a Content-Type names Kubernetes protobuf.
func isProtobuf(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == mediaTypeProtobuf
}

// decodeProtobuf turns a protobuf body for t into the JSON object a JSON client would have
// sent; a kind not served in protobuf is 415, a malformed body or another kind 400.
func decodeProtobuf(t target, data []byte) (map[string]any, error) {
	if !t.speaksProtobuf() {
		return nil, unsupportedMediaType(mediaTypeProtobuf)
	}
	obj, gvk, err := protobufSerializer.Decode(data, nil, nil)
	if err != nil {
		return nil, badRequest("the request body is not a valid protobuf object: %v", err)
	}
	if !protobufKinds[*gvk] {
		return nil, badRequest("the kind in the data (%s) does not match the expected kind (%s)", gvk.Kind, t.Kind.Kind)
	}
	obj.GetObjectKind().SetGroupVersionKind(*gvk)
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s as JSON: %w", gvk.Kind, err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decode %s JSON: %w", gvk.Kind, err)
	}
	return out, nil
}

// protobufDeleteOptions reads a protobuf DeleteOptions body.
func protobufDeleteOptions(data []byte) (metav1.DeleteOptions, error) {
	var opts metav1.DeleteOptions
	if _, _, err := protobufSerializer.Decode(data, nil, &opts); err != nil {
		return opts, badRequest("the request body is not valid DeleteOptions: %v", err)
	}
	return opts, nil
}

// wantsProtobuf reports whether the request's Accept prefers protobuf: the media range with
// the highest q (the first of equals) is application/vnd.kubernetes.protobuf.
func wantsProtobuf(c echo.Context) bool {
	best, bestQ := "", -1.0
	for _, r := range strings.Split(c.Request().Header.Get(echo.HeaderAccept), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(r))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		if _, as := params["as"]; as && mt == mediaTypeProtobuf {
			continue // a Table or PartialObjectMetadata in protobuf is not served
		}
		if q > bestQ {
			best, bestQ = mt, q
		}
	}
	return best == mediaTypeProtobuf && bestQ > 0
}

// writeServed answers with a JSON object or list of t's kind: in protobuf when the client
// prefers it and the kind is served so, else as the JSON it is.
func writeServed(c echo.Context, t target, code int, raw []byte) error {
	if !t.speaksProtobuf() || !wantsProtobuf(c) {
		return c.JSONBlob(code, raw)
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return fmt.Errorf("read the type of a %s answer: %w", t.Kind.Kind, err)
	}
	obj, err := protobufScheme.New(tm.GroupVersionKind())
	if err != nil {
		return fmt.Errorf("type of a %s answer: %w", t.Kind.Kind, err)
	}
	if err := json.Unmarshal(raw, obj); err != nil {
		return fmt.Errorf("read a %s answer into its type: %w", t.Kind.Kind, err)
	}
	return writeProtobuf(c, code, obj)
}

// writeProtobuf answers with obj, whose apiVersion and kind are set, in protobuf.
func writeProtobuf(c echo.Context, code int, obj runtime.Object) error {
	var buf bytes.Buffer
	if err := protobufSerializer.Encode(obj, &buf); err != nil {
		return fmt.Errorf("encode %s as protobuf: %w", obj.GetObjectKind().GroupVersionKind().Kind, err)
	}
	return c.Blob(code, mediaTypeProtobuf, buf.Bytes())
}

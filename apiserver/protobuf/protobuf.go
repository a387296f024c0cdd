package protobuf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/minik8s/minik8s/api"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

const (
	// ContentType is the media type of Kubernetes' protobuf encoding.
	ContentType = runtime.ContentTypeProtobuf
	// WatchContentType is the Content-Type of a protobuf watch stream.
	WatchContentType = ContentType + ";stream=watch"
)

// ErrNotRegistered: the JSON given to Encode names no kind that has a
// protobuf encoding here (or names none).
var ErrNotRegistered = errors.New("no protobuf encoding")

var (
	scheme = newScheme()
	// serializer writes and reads the "k8s\x00" + runtime.Unknown
	// envelope; lists are written item by item, as kube-apiserver does
	// (the bytes are the same as marshalling the whole list at once).
	serializer = protobuf.NewSerializerWithOptions(scheme, scheme,
		protobuf.SerializerOptions{StreamingCollectionsEncoding: true})
	// raw writes a watch event's metav1.WatchEvent with no envelope.
	raw = protobuf.NewRawSerializer(scheme, scheme)
)

// newScheme registers the k8s.io/api groups whose kinds the apiserver
// serves or reads as bodies (autoscaling/v1 for Scale). Each group's
// AddToScheme also registers Status, WatchEvent, the discovery documents
// and the option kinds.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		admissionregistrationv1.AddToScheme,
		appsv1.AddToScheme,
		authenticationv1.AddToScheme, // the reviews
		authorizationv1.AddToScheme,
		autoscalingv1.AddToScheme,
		autoscalingv2.AddToScheme,
		batchv1.AddToScheme,
		certificatesv1.AddToScheme,
		coordinationv1.AddToScheme,
		discoveryv1.AddToScheme,
		eventsv1.AddToScheme,
		flowcontrolv1.AddToScheme,
		networkingv1.AddToScheme,
		nodev1.AddToScheme,
		policyv1.AddToScheme, // Eviction, PodDisruptionBudget
		rbacv1.AddToScheme,
		resourcev1.AddToScheme,
		schedulingv1.AddToScheme,
		storagev1.AddToScheme,
		storagemigrationv1.AddToScheme,
		apiregistrationv1.AddToScheme, // APIService, from k8s.io/kube-aggregator
		apiextensionsv1.AddToScheme,   // CustomResourceDefinition, from k8s.io/apiextensions-apiserver
		metav1.AddMetaToScheme,
		apidiscoveryv2.AddToScheme, // the aggregated discovery document
	} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("protobuf scheme: %v", err))
		}
	}
	return s
}

// Registered reports whether objects of apiVersion and kind have a
// protobuf encoding here.
func Registered(apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return err == nil && kind != "" && scheme.Recognizes(gv.WithKind(kind))
}

// Encode returns the protobuf encoding of the API object data holds as
// JSON; data names the object's apiVersion and kind.
func Encode(data []byte) ([]byte, error) {
	obj, err := fromJSON(data)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := serializer.Encode(obj, &buf); err != nil {
		return nil, fmt.Errorf("encode %s as protobuf: %w", obj.GetObjectKind().GroupVersionKind().Kind, err)
	}
	return buf.Bytes(), nil
}

// fromJSON reads JSON into the k8s.io/api type its apiVersion and kind name.
func fromJSON(data []byte) (runtime.Object, error) {
	tm, err := typeMeta(data)
	if err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil || tm.Kind == "" {
		return nil, fmt.Errorf("%w for apiVersion %q, kind %q", ErrNotRegistered, tm.APIVersion, tm.Kind)
	}
	obj, err := scheme.New(gv.WithKind(tm.Kind))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotRegistered, err)
	}
	if err := json.Unmarshal(data, obj); err != nil {
		return nil, fmt.Errorf("read %s: %w", tm.Kind, err)
	}
	if got := obj.GetObjectKind().GroupVersionKind(); got != gv.WithKind(tm.Kind) {
		return nil, fmt.Errorf("read %s: the object says it is a %s", tm.Kind, got.Kind)
	}
	return obj, nil
}

// typeMeta reads the kind and apiVersion of a JSON object. The apiserver
// writes them first ({"kind":"Pod","apiVersion":"v1",...}), so they are
// read from the start without scanning the document, which json.Unmarshal
// does in full (twice) for two fields; anything else takes that way.
func typeMeta(data []byte) (api.TypeMeta, error) {
	var tm api.TypeMeta
	rest, ok := bytes.CutPrefix(data, []byte(`{"kind":"`))
	if ok {
		tm.Kind, rest, ok = cutPlainString(rest)
	}
	if ok {
		rest, ok = bytes.CutPrefix(rest, []byte(`,"apiVersion":"`))
	}
	if ok {
		tm.APIVersion, rest, ok = cutPlainString(rest)
	}
	if ok && len(rest) > 0 && (rest[0] == ',' || rest[0] == '}') {
		return tm, nil
	}
	tm = api.TypeMeta{}
	if err := json.Unmarshal(data, &tm); err != nil {
		return tm, fmt.Errorf("read apiVersion and kind: %w", err)
	}
	return tm, nil
}

// cutPlainString reads a JSON string's contents up to its closing quote;
// ok is false if it has escapes or does not end.
func cutPlainString(b []byte) (string, []byte, bool) {
	for i, c := range b {
		switch {
		case c == '"':
			return string(b[:i]), b[i+1:], true
		case c == '\\' || c < 0x20:
			return "", nil, false
		}
	}
	return "", nil, false
}

// Decode reads a protobuf body and returns the object it holds as JSON,
// with the apiVersion and kind its envelope names. The type is set as far
// as it could be read even when err is not nil, so callers can say what
// they got.
func Decode(data []byte) ([]byte, api.TypeMeta, error) {
	obj, gvk, err := serializer.Decode(data, nil, nil)
	var tm api.TypeMeta
	if gvk != nil {
		tm.APIVersion, tm.Kind = gvk.GroupVersion().String(), gvk.Kind
	}
	if err != nil {
		return nil, tm, err
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, tm, err
	}
	return out, tm, nil
}

// WatchEvent returns one frame of a protobuf watch stream: the event's
// length (4 bytes, big-endian) and a metav1.WatchEvent of type typ whose
// object is Encode(object).
func WatchEvent(typ string, object []byte) ([]byte, error) {
	obj, err := Encode(object)
	if err != nil {
		return nil, err
	}
	ev := &metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: obj}}
	var body bytes.Buffer
	if err := raw.Encode(ev, &body); err != nil {
		return nil, fmt.Errorf("encode watch event: %w", err)
	}
	var frame bytes.Buffer
	frame.Grow(4 + body.Len())
	if _, err := protobuf.LengthDelimitedFramer.NewFrameWriter(&frame).Write(body.Bytes()); err != nil {
		return nil, err
	}
	return frame.Bytes(), nil
}

package protobuf

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"

	"github.com/minik8s/minik8s/api"
)

// podJSON is a pod as the apiserver stores and sends it.
const podJSON = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default","uid":"u-1",
"resourceVersion":"42","creationTimestamp":"2026-01-02T03:04:05Z","labels":{"app":"web"}},
"spec":{"containers":[{"name":"c","image":"busybox:1.36","resources":{"requests":{"cpu":"100m","memory":"64Mi"}},
"ports":[{"containerPort":8080,"protocol":"TCP"}]}],"restartPolicy":"Always","nodeName":"n1"},
"status":{"phase":"Running","podIP":"10.0.0.5","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-02T03:04:06Z"}]}}`

// sameJSON fails unless a and b hold the same JSON value.
func sameJSON(t *testing.T, a, b []byte) {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("bad JSON %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("bad JSON %s: %v", b, err)
	}
	if !reflect.DeepEqual(va, vb) {
		t.Fatalf("JSON differs:\n%s\n%s", a, b)
	}
}

// TestEveryServedKindRegistered: each kind the apiserver serves, its list
// and the kinds of its subresource bodies and answers have an encoding.
func TestEveryServedKindRegistered(t *testing.T) {
	t.Parallel()
	for _, ri := range api.Resources {
		for _, kind := range []string{ri.Kind, ri.ListKind(), "DeleteOptions"} {
			if !Registered(ri.GroupVersion(), kind) {
				t.Errorf("%s %s has no protobuf encoding", ri.GroupVersion(), kind)
			}
		}
	}
	for _, gvk := range [][2]string{{"v1", "Status"}, {"v1", "Binding"}, {"autoscaling/v1", "Scale"},
		{"v1", "APIResourceList"}, {"v1", "APIGroupList"}, {"v1", "APIVersions"}, {"v1", "WatchEvent"},
		{"meta.k8s.io/v1", "PartialObjectMetadataList"}} {
		if !Registered(gvk[0], gvk[1]) {
			t.Errorf("%s %s has no protobuf encoding", gvk[0], gvk[1])
		}
	}
	if Registered("v1", "NoSuchKind") || Registered("not a version//", "Pod") {
		t.Error("Registered accepts what is not registered")
	}
}

// TestRoundTrip: every served kind, and a full pod, come back from
// protobuf as the objects they went in as, read into the apiserver's types
// (k8s.io/api writes empty structs and nulls those types omit).
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	type doc struct {
		json []byte
		new  func() api.Object
	}
	docs := map[string]doc{"Pod/full": {[]byte(podJSON), func() api.Object { return &api.Pod{} }}}
	for _, ri := range api.Resources {
		obj := ri.New()
		*obj.GetTypeMeta() = api.TypeMeta{APIVersion: ri.GroupVersion(), Kind: ri.Kind}
		obj.GetObjectMeta().Name = "x"
		obj.GetObjectMeta().Labels = map[string]string{"a": "b"}
		data, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		docs[ri.Kind] = doc{data, ri.New}
	}
	for name, d := range docs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pb, err := Encode(d.json)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if !bytes.HasPrefix(pb, []byte("k8s\x00")) {
				t.Fatalf("no k8s magic: %q", pb[:min(8, len(pb))])
			}
			out, tm, err := Decode(pb)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			want, got := d.new(), d.new()
			if err := json.Unmarshal(d.json, want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, got); err != nil {
				t.Fatalf("the apiserver's type rejects %s: %v", out, err)
			}
			if tm != *want.GetTypeMeta() {
				t.Fatalf("type %+v, want %+v", tm, *want.GetTypeMeta())
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round trip differs:\n%s\n%s", out, d.json)
			}
		})
	}
}

// TestPodIsKubernetesEncoding checks the bytes against k8s.io/api's
// generated marshalling of the same pod, independently of the serializer.
func TestPodIsKubernetesEncoding(t *testing.T) {
	t.Parallel()
	var pod corev1.Pod
	if err := json.Unmarshal([]byte(podJSON), &pod); err != nil {
		t.Fatal(err)
	}
	raw, err := pod.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	pb, err := Encode([]byte(podJSON))
	if err != nil {
		t.Fatal(err)
	}
	// runtime.Unknown: field 1 TypeMeta{1: apiVersion, 2: kind}, 2 raw.
	want := append([]byte("k8s\x00"), 0x0a, 0x09, 0x0a, 0x02, 'v', '1', 0x12, 0x03, 'P', 'o', 'd', 0x12)
	want = appendVarint(want, uint64(len(raw)))
	want = append(want, raw...)
	want = append(want, 0x1a, 0x00, 0x22, 0x00) // contentEncoding, contentType: empty
	if !bytes.Equal(pb, want) {
		t.Fatalf("encoding differs from k8s.io/api's:\n got %x\nwant %x", pb, want)
	}
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// TestListRoundTrip: a list's items survive, with its metadata.
func TestListRoundTrip(t *testing.T) {
	t.Parallel()
	in := []byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"c"},"items":[` +
		podJSON + `,` + strings.Replace(podJSON, `"name":"p"`, `"name":"q"`, 1) + `]}`)
	pb, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, tm, err := Decode(pb)
	if err != nil || tm.Kind != "PodList" {
		t.Fatalf("decode: %v %+v", err, tm)
	}
	var got, want api.PodList
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(in, &want); err != nil {
		t.Fatal(err)
	}
	// Items carry no kind of their own in protobuf.
	for i := range want.Items {
		want.Items[i].TypeMeta = api.TypeMeta{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("list differs:\n%s\n%s", out, in)
	}
}

// TestWatchEvent: a frame reads back with apimachinery's own stream
// decoder, and its object with the envelope decoder.
func TestWatchEvent(t *testing.T) {
	t.Parallel()
	var stream []byte
	for _, typ := range []string{"ADDED", "MODIFIED"} {
		frame, err := WatchEvent(typ, []byte(podJSON))
		if err != nil {
			t.Fatal(err)
		}
		stream = append(stream, frame...)
	}
	errorEvent, err := WatchEvent("ERROR", []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}`))
	if err != nil {
		t.Fatal(err)
	}
	bookmark, err := WatchEvent("BOOKMARK", []byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"9"}}`))
	if err != nil {
		t.Fatal(err)
	}
	stream = append(stream, bookmark...)
	stream = append(stream, errorEvent...)
	dec := streaming.NewDecoder(protobuf.LengthDelimitedFramer.NewFrameReader(io.NopCloser(bytes.NewReader(stream))), raw)
	for _, want := range []string{"ADDED", "MODIFIED", "BOOKMARK"} {
		var ev metav1.WatchEvent
		if _, _, err := dec.Decode(nil, &ev); err != nil {
			t.Fatalf("decode %s: %v", want, err)
		}
		obj, _, err := serializer.Decode(ev.Object.Raw, nil, nil)
		if err != nil {
			t.Fatalf("decode %s object: %v", want, err)
		}
		pod, ok := obj.(*corev1.Pod)
		if ev.Type != want || !ok {
			t.Fatalf("event %s %T, want %s Pod", ev.Type, obj, want)
		}
		if want != "BOOKMARK" && (pod.Name != "p" || pod.Spec.Containers[0].Resources.Requests.Cpu().MilliValue() != 100) {
			t.Fatalf("pod %+v", pod)
		}
	}
	var ev metav1.WatchEvent
	if _, _, err := dec.Decode(nil, &ev); err != nil || ev.Type != "ERROR" {
		t.Fatalf("ERROR event: %v %s", err, ev.Type)
	}
	obj, _, err := serializer.Decode(ev.Object.Raw, nil, nil)
	if st, ok := obj.(*metav1.Status); err != nil || !ok || st.Code != 410 || st.Reason != metav1.StatusReasonExpired {
		t.Fatalf("ERROR event object: %v %#v", err, obj)
	}
	if _, _, err := dec.Decode(nil, &metav1.WatchEvent{}); err != io.EOF {
		t.Fatalf("after the last frame: %v", err)
	}
}

// TestDecodeErrors: what is not a well-formed envelope of a known kind is
// an error, with the type named when the envelope could be read.
func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	pod, err := Encode([]byte(podJSON))
	if err != nil {
		t.Fatal(err)
	}
	unknown := bytes.Replace(pod, []byte("\x12\x03Pod"), []byte("\x12\x03Pox"), 1)
	tests := []struct {
		name string
		data []byte
		want api.TypeMeta
	}{
		{"empty", nil, api.TypeMeta{}},
		{"magic only", []byte("k8s\x00"), api.TypeMeta{}},
		{"json", []byte(podJSON), api.TypeMeta{}},
		{"truncated envelope", pod[:20], api.TypeMeta{}},
		{"truncated object", pod[:len(pod)-30], api.TypeMeta{}},
		{"unknown kind", unknown, api.TypeMeta{APIVersion: "v1", Kind: "Pox"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, tm, err := Decode(tc.data)
			if err == nil {
				t.Fatalf("decoded %s", out)
			}
			if tm != tc.want {
				t.Fatalf("type %+v, want %+v (%v)", tm, tc.want, err)
			}
		})
	}
	if _, err := Encode([]byte(`{"kind":"Pox","apiVersion":"v1"}`)); err == nil {
		t.Error("encoded an unknown kind")
	}
	if _, err := Encode([]byte(`not json`)); err == nil {
		t.Error("encoded what is not JSON")
	}
}

func TestTypeMeta(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]api.TypeMeta{
		`{"kind":"Pod","apiVersion":"v1","metadata":{}}`:                                 {Kind: "Pod", APIVersion: "v1"},
		`{"kind":"PodList","apiVersion":"v1"}`:                                           {Kind: "PodList", APIVersion: "v1"},
		`{"apiVersion":"apps/v1","kind":"Deployment"}`:                                   {Kind: "Deployment", APIVersion: "apps/v1"},
		`{"metadata":{"kind":"x"},"kind":"Lease","apiVersion":"coordination.k8s.io/v1"}`: {Kind: "Lease", APIVersion: "coordination.k8s.io/v1"},
		`{"kind":"P\u006fd","apiVersion":"v1"}`:                                          {Kind: "Pod", APIVersion: "v1"},
		`{"kind":"Pod","apiVersion":"v1"x}`:                                              {},
		`{ "kind": "Pod", "apiVersion": "v1" }`:                                          {Kind: "Pod", APIVersion: "v1"},
		`{"kind":"Pod","apiVersion":"v1","kind":"Node"}`:                                 {Kind: "Pod", APIVersion: "v1"},
	} {
		got, err := typeMeta([]byte(in))
		if want == (api.TypeMeta{}) {
			if err == nil {
				t.Errorf("%s: read %+v", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", in, got, err, want)
		}
	}
	// A document that names two kinds is not encoded as either.
	if _, err := Encode([]byte(`{"kind":"Pod","apiVersion":"v1","kind":"Node"}`)); err == nil {
		t.Error("encoded a document with two kinds")
	}
}

// FuzzProtobufDecode: no input makes Decode panic, and what it decodes
// encodes back to the same object.
func FuzzProtobufDecode(f *testing.F) {
	for _, doc := range []string{podJSON,
		`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"m","reason":"NotFound","code":404,"details":{"name":"p","kind":"pods"}}`,
		`{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"d"},"spec":{"replicas":2,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`,
		`{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"propagationPolicy":"Foreground"}`,
		`{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"d"},"spec":{"replicas":3}}`,
	} {
		pb, err := Encode([]byte(doc))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(pb)
		f.Add(pb[:len(pb)/2])
	}
	f.Add([]byte{})
	f.Add([]byte("k8s\x00"))
	f.Add([]byte("k8s\x00\x0a\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, tm, err := Decode(data)
		if err != nil {
			return
		}
		// The apiserver reads the JSON into its own type next: that must
		// not panic either (an error is a 400).
		if ri, ok := api.LookupKind(tm.APIVersion, tm.Kind); ok {
			_ = json.Unmarshal(out, ri.New())
		}
		pb, err := Encode(out)
		if err != nil {
			t.Fatalf("decoded %s, which does not encode: %v", out, err)
		}
		again, _, err := Decode(pb)
		if err != nil {
			t.Fatalf("re-encoded %s, which does not decode: %v", out, err)
		}
		sameJSON(t, again, out)
	})
}

// The conversion's cost per pod, each way (the apiserver's JSON work,
// which both media types share, is not included).
func BenchmarkEncodePod(b *testing.B) {
	for range b.N {
		if _, err := Encode([]byte(podJSON)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodePod(b *testing.B) {
	pb, err := Encode([]byte(podJSON))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, _, err := Decode(pb); err != nil {
			b.Fatal(err)
		}
	}
}

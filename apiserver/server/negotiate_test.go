package server

import (
	"net/http/httptest"
	"testing"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/protobuf"
)

func TestMediaTypeNames(t *testing.T) {
	t.Parallel()
	if mediaProtobuf.String() != protobuf.ContentType {
		t.Fatalf("protobuf is %s here and %s in package protobuf", mediaProtobuf, protobuf.ContentType)
	}
	if mediaProtobuf.String()+";stream=watch" != protobuf.WatchContentType {
		t.Fatalf("protobuf watch is %s", protobuf.WatchContentType)
	}
}

// TestNegotiateOutput follows kube-apiserver's NegotiateOutputMediaType:
// goautoneg's clause order, wildcards, parameters a clause may not carry.
func TestNegotiateOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		accept              string
		want                mediaType // zero: 406
		streamNotAcceptable bool      // a watch with it is 406
	}{
		{accept: "", want: mediaJSON},
		{accept: "application/json", want: mediaJSON},
		{accept: "application/yaml", want: mediaYAML, streamNotAcceptable: true},
		{accept: "application/vnd.kubernetes.protobuf", want: mediaProtobuf},
		{accept: "application/vnd.kubernetes.protobuf,application/json", want: mediaProtobuf}, // client-go's
		{accept: "application/json, */*", want: mediaJSON},
		{accept: "*/*", want: mediaJSON},
		{accept: "application/*", want: mediaJSON},
		{accept: "text/*, application/*;q=0.2", want: mediaJSON},
		{accept: "application/json;q=0.5, application/vnd.kubernetes.protobuf", want: mediaProtobuf},
		{accept: "application/vnd.kubernetes.protobuf;q=0.5, application/json;q=0.9", want: mediaJSON},
		{accept: "*/*;q=0.1, application/yaml", want: mediaYAML, streamNotAcceptable: true},
		{accept: "text/html, application/json;q=0.1", want: mediaJSON},
		{accept: "application/vnd.kubernetes.protobuf;stream=watch", want: mediaProtobuf},
		{accept: "application/json;stream=watch", want: mediaJSON},
		// YAML has no stream form: the clause is passed over.
		{accept: "application/yaml;stream=watch, application/json", want: mediaJSON},
		{accept: "application/json;stream=other, application/vnd.kubernetes.protobuf", want: mediaProtobuf},
		// A conversion the endpoint does not serve: the client's fallback.
		{accept: "application/vnd.kubernetes.protobuf;as=NoSuchKind;g=meta.k8s.io;v=v1,application/json", want: mediaJSON},
		{accept: "application/json;sv=v1, application/yaml", want: mediaYAML, streamNotAcceptable: true},
		{accept: "application/json;pretty=1;unknown=x", want: mediaJSON},
		{accept: "text/html"},
		{accept: "application/xml, text/*"},
		{accept: "application/json;as=NoSuchKind;v=v1;g=meta.k8s.io"},
		{accept: "Application/JSON"}, // kube-apiserver matches case-sensitively too
	}
	for _, tc := range tests {
		r := httptest.NewRequest("GET", "/api/v1/pods", nil)
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		out, err := negotiateOutput(r)
		if tc.want == (mediaType{}) {
			if !apierrors.IsNotAcceptable(err) {
				t.Errorf("Accept %q: %v %v, want 406", tc.accept, out.media, err)
			}
			continue
		}
		if err != nil || out.media != tc.want {
			t.Errorf("Accept %q: %v %v, want %v", tc.accept, out.media, err, tc.want)
		}
		out, err = negotiateStream(r)
		if tc.streamNotAcceptable {
			if !apierrors.IsNotAcceptable(err) {
				t.Errorf("watch, Accept %q: %v %v, want 406", tc.accept, out.media, err)
			}
		} else if err != nil || out.media != tc.want {
			t.Errorf("watch, Accept %q: %v %v, want %v", tc.accept, out.media, err, tc.want)
		}
	}
}

func TestReadContentType(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]mediaType{
		"":                                    mediaJSON,
		"application/json":                    mediaJSON,
		"application/json; charset=utf-8":     mediaJSON,
		"application/yaml":                    mediaYAML,
		"application/vnd.kubernetes.protobuf": mediaProtobuf,
		"text/plain":                          {},
		"application/merge-patch+json":        {},
		"*/*":                                 {},
		"application/x-yaml":                  {},
		"not a media type;;":                  {},
	} {
		r := httptest.NewRequest("POST", "/api/v1/namespaces/default/pods", nil)
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		got, err := readContentType(r)
		if want == (mediaType{}) {
			if !apierrors.IsUnsupportedMediaType(err) {
				t.Errorf("Content-Type %q: %v %v, want 415", ct, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("Content-Type %q: %v %v, want %v", ct, got, err, want)
		}
	}
}

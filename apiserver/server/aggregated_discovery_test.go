package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/discovery"
)

// TestNegotiateDiscovery: /api and /apis choose the aggregated document
// when any clause asks for apidiscovery.k8s.io/v2 APIGroupDiscoveryList
// (as kube-apiserver's WrappedHandler), the legacy one in the first
// encoding a plain clause names, and 406 otherwise (v2beta1 included: kube
// v1.37 no longer serves it).
func TestNegotiateDiscovery(t *testing.T) {
	t.Parallel()
	const v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	tests := []struct {
		accept     string
		want       mediaType // zero: 406
		aggregated bool
	}{
		{accept: "", want: mediaJSON},
		{accept: v2, want: mediaJSON, aggregated: true},
		{accept: "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", want: mediaProtobuf, aggregated: true},
		{accept: "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", want: mediaYAML, aggregated: true},
		{accept: "*/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", want: mediaJSON, aggregated: true},
		// The aggregated clause wins wherever it stands.
		{accept: "application/json, " + v2, want: mediaJSON, aggregated: true},
		{accept: "application/yaml;q=0.9, " + v2 + ";q=0.1", want: mediaJSON, aggregated: true},
		{accept: v2 + ";stream=watch", want: mediaJSON, aggregated: true},
		{accept: v2 + ";sv=v1"},
		{accept: "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"},
		{accept: "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/yaml", want: mediaYAML},
		{accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscovery"},
		{accept: "application/json;as=Table;v=v1;g=meta.k8s.io"},
		{accept: "application/json;;;", want: mediaJSON},
		{accept: "foo"},
		{accept: ",,,"},
	}
	for _, tc := range tests {
		r := httptest.NewRequest("GET", "/apis", nil)
		r.Header.Set("Accept", tc.accept)
		out, aggregated, err := negotiateDiscovery(r)
		switch {
		case tc.want == (mediaType{}):
			if !apierrors.IsNotAcceptable(err) {
				t.Errorf("Accept %q: %v %v %v, want 406", tc.accept, out.media, aggregated, err)
			}
		case err != nil || out.media != tc.want || aggregated != tc.aggregated:
			t.Errorf("Accept %q: %v aggregated=%v %v, want %v aggregated=%v", tc.accept, out.media, aggregated, err, tc.want, tc.aggregated)
		}
	}
}

// TestWriteAggregated: the document's headers, kube's Content-Type naming
// the conversion, and 304 with no body for its quoted ETag only.
func TestWriteAggregated(t *testing.T) {
	t.Parallel()
	s := &Server{}
	groups := []discovery.APIGroupDiscovery{{Metadata: discovery.ObjectMeta{Name: "apps"}, Versions: []discovery.APIVersionDiscovery{{Version: "v1", Freshness: discovery.Current}}}}
	doc, _ := discovery.Encode(groups)
	serve := func(media mediaType, ifNoneMatch string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/apis", nil)
		if ifNoneMatch != "" {
			r.Header.Set("If-None-Match", ifNoneMatch)
		}
		w := httptest.NewRecorder()
		s.writeAggregated(w, r, output{media: media, convert: &aggregatedTarget}, groups)
		return w
	}
	for _, m := range mediaTypes {
		w := serve(m, "")
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != m.String()+";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" ||
			w.Header().Get("ETag") != `"`+doc.ETag+`"` || w.Header().Get("Vary") != "Accept" || w.Header().Get("Cache-Control") != "public" {
			t.Errorf("%s: %d %v", m, w.Code, w.Header())
		}
	}
	if w := serve(mediaJSON, ""); w.Body.String() != string(doc.JSON) {
		t.Errorf("JSON body %s", w.Body)
	}
	if w := serve(mediaProtobuf, ""); !strings.HasPrefix(w.Body.String(), "k8s\x00") {
		t.Errorf("protobuf body %q", w.Body)
	}
	if w := serve(mediaJSON, `"`+doc.ETag+`"`); w.Code != http.StatusNotModified || w.Body.Len() != 0 {
		t.Errorf("If-None-Match the ETag: %d %q", w.Code, w.Body)
	}
	for _, other := range []string{doc.ETag, `W/"` + doc.ETag + `"`, `"x"`} {
		if w := serve(mediaJSON, other); w.Code != http.StatusOK {
			t.Errorf("If-None-Match %s: %d", other, w.Code)
		}
	}
}

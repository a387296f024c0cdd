package openapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"

	"github.com/minik8s/minik8s/api"
)

func testServer(t *testing.T) (*Docs, *httptest.Server) {
	t.Helper()
	d := mustNew(t, api.Resources, kubernetesPatchSchema)
	mux := http.NewServeMux()
	mux.Handle("/openapi/v2", d.V2())
	mux.Handle("/openapi/v3", d.V3())
	mux.Handle("/openapi/v3/", d.V3())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return d, srv
}

// get sends a request without Go's transparent gzip, so the test sees the
// encoding the server chose.
func get(t *testing.T, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := &http.Client{
		Transport:     &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestV2Negotiation(t *testing.T) {
	t.Parallel()
	d, srv := testServer(t)
	tests := []struct {
		name, accept string
		code         int
		contentType  string
	}{
		{"no accept", "", 200, "application/json"},
		{"json", "application/json", 200, "application/json"},
		{"wildcard", "*/*", 200, "application/json"},
		{"client-go protobuf", v2ProtoTypeDeprecated + ", application/json", 200, v2ProtoType},
		{"protobuf", v2ProtoType, 200, v2ProtoType},
		{"json preferred by q", v2ProtoType + ";q=0.5, application/json", 200, "application/json"},
		{"v3 protobuf is not v2", v3ProtoType, 406, ""},
		{"xml", "application/xml", 406, ""},
	}
	for _, tt := range tests {
		resp, body := get(t, srv.URL+"/openapi/v2", "Accept", tt.accept)
		if resp.StatusCode != tt.code {
			t.Errorf("%s: code %d, want %d", tt.name, resp.StatusCode, tt.code)
			continue
		}
		if tt.code != 200 {
			continue
		}
		if ct := resp.Header.Get("Content-Type"); ct != tt.contentType {
			t.Errorf("%s: Content-Type %q, want %q", tt.name, ct, tt.contentType)
		}
		if et := resp.Header.Get("Etag"); et != strconv.Quote(mustV2(d).etag) {
			t.Errorf("%s: Etag %q", tt.name, et)
		}
		switch tt.contentType {
		case "application/json":
			if !bytes.Equal(body, mustV2(d).plainJSON()) {
				t.Errorf("%s: body is not the v2 JSON", tt.name)
			}
		default:
			var doc openapiv2.Document
			if err := proto.Unmarshal(body, &doc); err != nil {
				t.Errorf("%s: %v", tt.name, err)
			} else if doc.Swagger != "2.0" || doc.Info.GetTitle() != "Kubernetes" || len(doc.Definitions.GetAdditionalProperties()) == 0 {
				t.Errorf("%s: protobuf document %q %q with %d definitions", tt.name, doc.Swagger, doc.Info.GetTitle(), len(doc.Definitions.GetAdditionalProperties()))
			}
		}
	}

	// Conditional requests and gzip.
	resp, _ := get(t, srv.URL+"/openapi/v2", "If-None-Match", strconv.Quote(mustV2(d).etag))
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: code %d, want 304", resp.StatusCode)
	}
	resp, body := get(t, srv.URL+"/openapi/v2", "Accept-Encoding", "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Accept-Encoding gzip: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(plain, mustV2(d).plainJSON()) {
		t.Errorf("gzipped body does not decompress to the document (%v)", err)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/openapi/v2", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %v %v", resp.StatusCode, err)
	}
}

func TestV3Handler(t *testing.T) {
	t.Parallel()
	d, srv := testServer(t)
	resp, body := get(t, srv.URL+"/openapi/v3")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("discovery: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get("Cache-Control") != "" {
		t.Errorf("discovery is cacheable: %s", resp.Header.Get("Cache-Control"))
	}
	var index v3Discovery
	if err := json.Unmarshal(body, &index); err != nil || len(index.Paths) == 0 {
		t.Fatalf("discovery %s: %v", body, err)
	}
	for gv, entry := range index.Paths {
		resp, body := get(t, srv.URL+entry.ServerRelativeURL)
		if resp.StatusCode != 200 {
			t.Errorf("%s: code %d", gv, resp.StatusCode)
			continue
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "public, immutable" {
			t.Errorf("%s: Cache-Control %q", gv, cc)
		}
		if resp.Header.Get("Expires") == "" {
			t.Errorf("%s: no Expires", gv)
		}
		if et := resp.Header.Get("Etag"); et != strconv.Quote(mustV3(d)[gv].etag) || !strings.HasSuffix(entry.ServerRelativeURL, "hash="+mustV3(d)[gv].etag) {
			t.Errorf("%s: Etag %s for %s", gv, et, entry.ServerRelativeURL)
		}
		if !bytes.Equal(body, mustV3(d)[gv].plainJSON()) {
			t.Errorf("%s: body is not the document", gv)
		}

		// Without a hash: the document, not marked immutable.
		resp, _ = get(t, srv.URL+"/openapi/v3/"+gv)
		if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "" {
			t.Errorf("%s without hash: %d, Cache-Control %q", gv, resp.StatusCode, resp.Header.Get("Cache-Control"))
		}
		// An old hash redirects to the current one.
		resp, _ = get(t, srv.URL+"/openapi/v3/"+gv+"?hash=0123")
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != entry.ServerRelativeURL {
			t.Errorf("%s old hash: %d to %q", gv, resp.StatusCode, resp.Header.Get("Location"))
		}
		// Protobuf, as kube-apiserver serves it.
		resp, body = get(t, srv.URL+entry.ServerRelativeURL, "Accept", v3ProtoTypeDeprecated)
		var doc openapiv3.Document
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != v3ProtoType {
			t.Errorf("%s protobuf: %d %s", gv, resp.StatusCode, resp.Header.Get("Content-Type"))
		} else if err := proto.Unmarshal(body, &doc); err != nil || doc.Openapi != "3.0.0" {
			t.Errorf("%s protobuf: %q %v", gv, doc.Openapi, err)
		}
	}
	resp, body = get(t, srv.URL+"/openapi/v3/apis/nothing.example.com/v1")
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `"reason":"NotFound"`) {
		t.Errorf("unknown group-version: %d %s", resp.StatusCode, body)
	}
}

// TestClientGo reads the documents the way kubectl does.
func TestClientGo(t *testing.T) {
	t.Parallel()
	_, srv := testServer(t)
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatalf("OpenAPISchema: %v", err)
	}
	found := false
	for _, def := range doc.GetDefinitions().GetAdditionalProperties() {
		found = found || def.GetName() == "io.k8s.api.coordination.v1.Lease"
	}
	if doc.GetSwagger() != "2.0" || !found {
		t.Errorf("OpenAPISchema: swagger %q, Lease found %v", doc.GetSwagger(), found)
	}

	root := openapi3.NewRoot(dc.OpenAPIV3())
	gvs, err := root.GroupVersions()
	if err != nil {
		t.Fatalf("GroupVersions: %v", err)
	}
	if len(gvs) == 0 {
		t.Fatal("no group-versions")
	}
	for _, ri := range api.Resources {
		gv := k8sschema.GroupVersion{Group: ri.Group, Version: ri.Version}
		spec, err := root.GVSpec(gv)
		if err != nil {
			t.Errorf("GVSpec(%s): %v", gv, err)
			continue
		}
		name := groupPrefix(ri.Group, ri.Version) + "." + ri.Kind
		s, ok := spec.Components.Schemas[name]
		if !ok {
			t.Errorf("%s: no schema %s", gv, name)
			continue
		}
		if s.Extensions["x-kubernetes-group-version-kind"] == nil {
			t.Errorf("%s: %s has no group-version-kind", gv, name)
		}
	}
}

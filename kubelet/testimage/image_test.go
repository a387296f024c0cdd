package testimage

import (
	"archive/tar"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestArchiveAndRegistry(t *testing.T) {
	img, err := Busybox()
	if err != nil {
		t.Skip(err)
	}
	ar, err := img.Archive(Ref)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	tr := tar.NewReader(bytes.NewReader(ar))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names[h.Name] = true
	}
	for _, n := range []string{"oci-layout", "index.json", "blobs/sha256/" + img.Manifest.Digest.Encoded(), "blobs/sha256/" + img.Layer.Digest.Encoded()} {
		if !names[n] {
			t.Errorf("archive lacks %s", n)
		}
	}
	srv := httptest.NewServer(&Registry{Image: img, Tags: map[string]bool{"v1": true}})
	defer srv.Close()
	for path, want := range map[string]int{
		"/v2/":                       200,
		"/v2/x/busybox/manifests/v1": 200,
		"/v2/x/busybox/manifests/v2": 404,
		"/v2/x/manifests/" + string(img.Manifest.Digest): 200,
		"/v2/x/blobs/" + string(img.Layer.Digest):        200,
		"/v2/x/blobs/sha256:00":                          404,
	} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

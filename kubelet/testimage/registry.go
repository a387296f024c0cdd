package testimage

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/opencontainers/go-digest"
)

// Registry is a read-only OCI distribution endpoint serving one image under
// every repository name and the tags in Tags. It answers GET and HEAD on
// /v2/, /v2/NAME/manifests/REF and /v2/NAME/blobs/DIGEST.
type Registry struct {
	Image *Image
	// Tags that resolve to the image; a manifest by digest always does.
	Tags map[string]bool
}

func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		http.Error(w, "read-only registry", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	p := req.URL.Path
	if p == "/v2/" || p == "/v2" {
		w.WriteHeader(http.StatusOK)
		return
	}
	if i := strings.LastIndex(p, "/manifests/"); strings.HasPrefix(p, "/v2/") && i > 0 {
		ref := p[i+len("/manifests/"):]
		if ref != r.Image.Manifest.Digest.String() && !r.Tags[ref] {
			http.Error(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`, http.StatusNotFound)
			return
		}
		r.send(w, req, r.Image.Manifest.Digest, r.Image.Manifest.MediaType)
		return
	}
	if i := strings.LastIndex(p, "/blobs/"); strings.HasPrefix(p, "/v2/") && i > 0 {
		d := digest.Digest(p[i+len("/blobs/"):])
		if _, ok := r.Image.Blobs[d]; !ok {
			http.Error(w, `{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown"}]}`, http.StatusNotFound)
			return
		}
		r.send(w, req, d, "application/octet-stream")
		return
	}
	http.NotFound(w, req)
}

func (r *Registry) send(w http.ResponseWriter, req *http.Request, d digest.Digest, mediaType string) {
	b := r.Image.Blobs[d]
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Docker-Content-Digest", d.String())
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if req.Method == http.MethodGet {
		_, _ = w.Write(b)
	}
}

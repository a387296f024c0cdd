package server

import (
	"context"
	"net/http"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/request"
)

// Reviewer answers the create-only review kinds (api.ReviewResources):
// it fills the status of a decoded review, or fails with a Status error.
// review.Reviewer is the apiserver's.
type Reviewer interface {
	Review(ctx context.Context, ri api.ResourceInfo, namespace string, obj api.Object) (api.Object, error)
}

// reviewResource finds the review kind a request addresses, when the server
// answers reviews.
func (s *Server) reviewResource(info *request.Info) (api.ResourceInfo, bool) {
	if s.cfg.Reviewer == nil {
		return api.ResourceInfo{}, false
	}
	for _, ri := range api.ReviewResources {
		if ri.Group == info.APIGroup && ri.Version == info.APIVersion && ri.Resource == info.Resource && info.APIPrefix == "apis" {
			return ri, true
		}
	}
	return api.ResourceInfo{}, false
}

// serveReview answers POST to a review's collection with the review, its
// status filled, and 201 as kube-apiserver does; a review is never stored,
// so it has no objects to get, list or watch, and no name in its path.
func (s *Server) serveReview(w http.ResponseWriter, r *http.Request, info *request.Info, ri api.ResourceInfo) {
	if len(info.Parts) != 1 || (ri.Namespaced != (info.Namespace != "")) {
		notFound(w, r)
		return
	}
	if info.Verb != "create" {
		methodNotAllowed(w, r)
		return
	}
	// A review has no table form: asking for one is 406, as on
	// kube-apiserver, whose review endpoints have no TableConvertor.
	if h := r.Header.Get("Accept"); h != "" {
		if _, ok := negotiate(h, allowsReviewTransform); !ok {
			writeError(w, r, notAcceptable(false))
			return
		}
	}
	obj := ri.New()
	if err := decodeBody(r, obj, ri.GroupVersion(), ri.Kind); err != nil {
		writeError(w, r, err)
		return
	}
	out, err := s.cfg.Reviewer.Review(r.Context(), ri, info.Namespace, obj)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusCreated, out)
}

// allowsReviewTransform is allowsTransform for the review kinds: no Table.
func allowsReviewTransform(m mediaType, target *groupVersionKind) bool {
	return allowsTransform(m, target) && (target == nil || target.kind != "Table")
}

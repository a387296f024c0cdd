package server

import (
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/printers"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/transform"
)

// CustomResources serves the resources CustomResourceDefinitions define
// (package crd). The server asks it for what its own stores do not serve;
// its answers change as CRDs come and go.
type CustomResources interface {
	// Lookup returns the served custom resource GROUP/VERSION/RESOURCE.
	Lookup(group, version, resource string) (*CustomResource, bool)
	// Served lists the served custom resources, for discovery: the
	// versions of a group in preference order, the preferred first.
	Served() []*CustomResource
}

// CustomResource is one served version of a custom resource.
type CustomResource struct {
	Store *registry.Store
	// Printer makes its tables (additionalPrinterColumns).
	Printer    *printers.Printer
	Categories []string
	// Terminating is set while its CRD is being deleted: no creates. The
	// CRD controller sets it while requests read it.
	Terminating atomic.Bool
}

// lookupCustom finds the custom resource a store serves, if it is one.
func (s *Server) lookupCustom(st *registry.Store) (*CustomResource, bool) {
	if s.cfg.Custom == nil || s.stores[st.Info.Group+"/"+st.Info.Resource] == st ||
		s.stores[st.Info.GroupVersion()+"/"+st.Info.Resource] == st {
		return nil, false
	}
	return s.cfg.Custom.Lookup(st.Info.Group, st.Info.Version, st.Info.Resource)
}

// converterFor is converter with the resource's own printer when it is a
// custom resource.
func (s *Server) converterFor(r *http.Request, st *registry.Store) (*transform.Converter, error) {
	cr, ok := s.lookupCustom(st)
	if !ok {
		return converter(r, st.Info)
	}
	out, err := negotiateOutput(r)
	if err != nil || out.convert == nil {
		return nil, err
	}
	return transform.WithPrinter(transformTarget(out.convert), st.Info, r.URL.Query(), cr.Printer)
}

// customMedia applies what kube-apiserver's custom resource handler
// accepts: JSON and YAML only (no protobuf) in bodies and answers, but
// metadata and tables in any encoding. It rewrites the request's Accept
// header without the protobuf choices, and reports false after writing the
// 406 or 415 when nothing is left.
func customMedia(w http.ResponseWriter, r *http.Request) bool {
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(strings.TrimSpace(ct), "application/vnd.kubernetes.protobuf") {
		writeError(w, r, apierrors.NewUnsupportedMediaType([]string{"application/json", "application/yaml",
			"application/apply-patch+yaml", "application/merge-patch+json", "application/json-patch+json"}))
		return false
	}
	if r.Method == http.MethodPatch && strings.HasPrefix(strings.TrimSpace(r.Header.Get("Content-Type")), string(registry.StrategicPatch)) {
		// Custom resources have no Go types, hence no patch strategies.
		writeError(w, r, apierrors.NewUnsupportedMediaType([]string{string(registry.JSONPatch), string(registry.MergePatch), string(registry.ApplyPatch)}))
		return false
	}
	accept := r.Header.Get("Accept")
	if !strings.Contains(accept, "protobuf") {
		return true
	}
	var kept []string
	for _, c := range strings.Split(accept, ",") {
		if strings.Contains(c, "protobuf") && !strings.Contains(c, "as=") {
			continue
		}
		kept = append(kept, strings.TrimSpace(c))
	}
	if len(kept) == 0 {
		writeError(w, r, notAcceptable(false))
		return false
	}
	r.Header.Set("Accept", strings.Join(kept, ", "))
	return true
}

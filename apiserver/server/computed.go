package server

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/apiserver/warning"
)

// ComponentStatuses answers the componentstatuses resource: the probes of
// the components kube-apiserver reports on (the scheduler, the
// controller-manager, etcd), each as a ComponentStatus.
type ComponentStatuses interface {
	ComponentStatuses(ctx context.Context) []api.ComponentStatus
}

// computedResource finds the resource of api.ComputedResources a request
// addresses, when the server answers it: componentstatuses with a
// ComponentStatuses, bindings with a pods store.
func (s *Server) computedResource(info *request.Info) (api.ResourceInfo, bool) {
	if info.APIPrefix != "api" || info.APIGroup != "" {
		return api.ResourceInfo{}, false
	}
	for _, ri := range s.computedResources() {
		if ri.Version == info.APIVersion && ri.Resource == info.Resource {
			return ri, true
		}
	}
	return api.ResourceInfo{}, false
}

// computedResources are the resources of api.ComputedResources this
// server answers.
func (s *Server) computedResources() []api.ResourceInfo {
	var out []api.ResourceInfo
	for _, ri := range api.ComputedResources {
		switch ri.Resource {
		case "componentstatuses":
			if s.cfg.ComponentStatuses == nil {
				continue
			}
		case "bindings":
			if s.stores["/pods"] == nil {
				continue
			}
		}
		out = append(out, ri)
	}
	return out
}

// serveComputed answers a request for a computed resource: a Binding
// POSTed to a namespace's bindings binds the pod it names, as the pod's
// binding subresource does; componentstatuses are got and listed, never
// written.
func (s *Server) serveComputed(w http.ResponseWriter, r *http.Request, info *request.Info, ri api.ResourceInfo) {
	if len(info.Parts) > 2 || ri.Namespaced != (info.Namespace != "") {
		notFound(w, r)
		return
	}
	if !slices.Contains(ri.Verbs, info.Verb) {
		methodNotAllowed(w, r)
		return
	}
	switch ri.Resource {
	case "bindings":
		dry, err := dryRun(r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		var b api.Binding
		if err := decodeBody(r, &b, "v1", "Binding"); err != nil {
			writeError(w, r, err)
			return
		}
		if err := registry.Bind(r.Context(), s.stores["/pods"], info.Namespace, b.Name, &b, dry); err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusCreated, api.Status{TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: api.StatusSuccess, Code: http.StatusCreated})
	case "componentstatuses":
		warning.Add(r.Context(), "v1 ComponentStatus is deprecated in v1.19+")
		conv, err := converter(r, ri)
		if err != nil {
			writeError(w, r, err)
			return
		}
		statuses := s.cfg.ComponentStatuses.ComponentStatuses(r.Context())
		slices.SortFunc(statuses, func(a, b api.ComponentStatus) int {
			return cmp.Compare(a.Name, b.Name)
		})
		if info.Verb == "get" {
			for i := range statuses {
				if statuses[i].Name == info.Name {
					cs := &statuses[i]
					cs.TypeMeta = api.TypeMeta{Kind: ri.Kind, APIVersion: ri.GroupVersion()}
					writeObject(w, r, http.StatusOK, conv, cs, nil)
					return
				}
			}
			writeError(w, r, apierrors.NewNotFound(apierrors.GroupResource{Resource: "componentstatus"}, info.Name))
			return
		}
		res := &registry.ListResult{}
		for i := range statuses {
			cs := &statuses[i]
			cs.TypeMeta = api.TypeMeta{Kind: ri.Kind, APIVersion: ri.GroupVersion()}
			data, err := json.Marshal(cs)
			if err != nil {
				writeError(w, r, apierrors.NewInternalError(err))
				return
			}
			res.Items = append(res.Items, registry.Item{JSON: data, Object: cs})
		}
		if conv != nil {
			data, err := conv.List(res)
			if err != nil {
				writeError(w, r, err)
				return
			}
			writeRaw(w, r, http.StatusOK, data)
			return
		}
		writeList(w, r, ri, res)
	}
}

package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/audit"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/apiserver/serviceaccount"
)

// serveSubresource handles status, binding, scale, eviction and finalize (log and
// exec go to the kubelet: proxy.go).
func (s *Server) serveSubresource(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store) {
	ctx := r.Context()
	dry, err := dryRun(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	switch info.Subresource {
	case "status", "approval":
		switch info.Verb {
		case "get":
			s.get(w, r, info, st)
		case "update":
			s.update(w, r, info, st)
		case "patch":
			s.patch(w, r, info, st, info.Subresource)
		default:
			methodNotAllowed(w, r)
		}
	case "binding":
		if info.Verb != "create" {
			methodNotAllowed(w, r)
			return
		}
		var b api.Binding
		if err := decodeBody(r, &b, "v1", "Binding"); err != nil {
			writeError(w, r, err)
			return
		}
		if err := registry.Bind(ctx, st, info.Namespace, info.Name, &b, dry); err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusCreated, api.Status{TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: api.StatusSuccess, Code: http.StatusCreated})
	case "scale":
		conv, err := converter(r, scaleInfo)
		if err != nil {
			writeError(w, r, err)
			return
		}
		var out *api.Scale
		switch info.Verb {
		case "get":
			out, err = registry.GetScale(ctx, st, info.Namespace, info.Name)
		case "update":
			var sc api.Scale
			if err := decodeBody(r, &sc, "autoscaling/v1", "Scale"); err != nil {
				writeError(w, r, err)
				return
			}
			o, oerr := parseWriteOptions(r, "UpdateOptions", false)
			if oerr != nil {
				writeError(w, r, oerr)
				return
			}
			out, err = registry.UpdateScale(ctx, st, info.Namespace, info.Name, &sc, o.WriteOptions)
		case "patch":
			body, rerr := readAll(r)
			if rerr != nil {
				writeError(w, r, rerr)
				return
			}
			o, oerr := parseWriteOptions(r, "PatchOptions", false)
			if oerr != nil {
				writeError(w, r, oerr)
				return
			}
			out, err = registry.PatchScale(ctx, st, info.Namespace, info.Name, registry.PatchType(r.Header.Get("Content-Type")), body, o.WriteOptions)
		default:
			methodNotAllowed(w, r)
			return
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeObject(w, r, http.StatusOK, conv, out, nil)
	case "eviction":
		s.evict(w, r, info, st, dry)
	case "token":
		s.createToken(w, r, info, st, dry)
	case "ephemeralcontainers":
		s.serveEphemeralContainers(w, r, info, st, dry)
	case "resize":
		s.serveResize(w, r, info, st)
	case "finalize":
		if info.Verb != "update" {
			methodNotAllowed(w, r)
			return
		}
		var ns api.Namespace
		if err := decodeBody(r, &ns, "v1", "Namespace"); err != nil {
			writeError(w, r, err)
			return
		}
		o, err := parseWriteOptions(r, "UpdateOptions", false)
		if err != nil {
			writeError(w, r, err)
			return
		}
		out, err := registry.Finalize(ctx, st, info.Name, &ns, o.WriteOptions)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusOK, out)
	default:
		writeError(w, r, apierrors.NewGeneric(http.StatusNotFound, api.StatusReasonNotFound,
			"the server could not find the requested resource"))
	}
}

// TokenCreator issues service-account tokens (serviceaccount.TokenRequests).
type TokenCreator interface {
	Create(ctx context.Context, namespace, name string, req *api.TokenRequest) (*api.TokenRequest, error)
}

// createToken answers POST serviceaccounts/NAME/token: an
// authentication.k8s.io/v1 TokenRequest in, the same with its token out
// (201).
func (s *Server) createToken(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store, dry bool) {
	if info.Verb != "create" {
		methodNotAllowed(w, r)
		return
	}
	if s.cfg.Tokens == nil {
		writeError(w, r, apierrors.NewGeneric(http.StatusNotFound, api.StatusReasonNotFound,
			"the server could not find the requested resource"))
		return
	}
	var req api.TokenRequest
	if err := decodeBody(r, &req, api.AuthenticationGroupName+"/v1", "TokenRequest"); err != nil {
		writeError(w, r, err)
		return
	}
	// Admission sees the request as sent (NodeRestriction holds a kubelet
	// to tokens bound to its own pods).
	if err := st.AdmitCreate(r.Context(), "token", info.Namespace, info.Name, &req, dry); err != nil {
		writeError(w, r, err)
		return
	}
	asked := req.Spec.ExpirationSeconds
	out, err := s.cfg.Tokens.Create(r.Context(), info.Namespace, info.Name, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if jti := serviceaccount.TokenID(out.Status.Token); jti != "" {
		audit.AddAnnotation(r.Context(), "authentication.kubernetes.io/issued-credential-id", "JTI="+jti)
	}
	if got := out.Spec.ExpirationSeconds; asked != nil && got != nil && *got < *asked {
		w.Header().Add("Warning", fmt.Sprintf(`299 - "requested expiration of %d seconds shortened to %d seconds"`, *asked, *got))
	}
	writeJSON(w, r, http.StatusCreated, out)
}

// serveEphemeralContainers handles pods/NAME/ephemeralcontainers: GET
// returns the Pod, PUT and PATCH change only spec.ephemeralContainers
// (kubectl debug sends a strategic-merge patch).
func (s *Server) serveEphemeralContainers(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store, dry bool) {
	if info.Verb == "get" {
		s.get(w, r, info, st)
		return
	}
	conv, err := s.converterFor(r, st)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var out *api.Pod
	switch info.Verb {
	case "update":
		var pod api.Pod
		if err := decodeBody(r, &pod, "v1", "Pod"); err != nil {
			writeError(w, r, err)
			return
		}
		out, err = registry.UpdateEphemeralContainers(r.Context(), st, info.Namespace, info.Name, &pod, dry)
	case "patch":
		body, rerr := readAll(r)
		if rerr != nil {
			writeError(w, r, rerr)
			return
		}
		out, err = registry.PatchEphemeralContainers(r.Context(), st, info.Namespace, info.Name,
			registry.PatchType(r.Header.Get("Content-Type")), body, dry)
	default:
		methodNotAllowed(w, r)
		return
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeObject(w, r, http.StatusOK, conv, out, nil)
}

// serveResize handles pods/NAME/resize (in-place pod resize): GET returns
// the Pod, PUT and PATCH change only its containers' resources and resize
// policies (kube's pod resize strategy).
func (s *Server) serveResize(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store) {
	if info.Verb == "get" {
		s.get(w, r, info, st)
		return
	}
	conv, err := s.converterFor(r, st)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var out *api.Pod
	switch info.Verb {
	case "update":
		obj, opts, ok := writeInput(w, r, st, "UpdateOptions")
		if !ok {
			return
		}
		pod, isPod := obj.(*api.Pod)
		if !isPod {
			writeError(w, r, apierrors.NewInternalError(fmt.Errorf("pods decode to %T", obj)))
			return
		}
		out, err = registry.UpdateResize(r.Context(), st, info.Namespace, info.Name, pod, opts)
	case "patch":
		pt := registry.PatchType(strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0]))
		switch pt {
		case registry.JSONPatch, registry.MergePatch, registry.StrategicPatch:
		default:
			// Server-side apply of pods/resize is not served yet.
			writeError(w, r, apierrors.NewUnsupportedMediaType([]string{string(registry.JSONPatch), string(registry.MergePatch), string(registry.StrategicPatch)}))
			return
		}
		body, rerr := readAll(r)
		if rerr != nil {
			writeError(w, r, rerr)
			return
		}
		o, oerr := parseWriteOptions(r, "PatchOptions", false)
		if oerr != nil {
			writeError(w, r, oerr)
			return
		}
		out, err = registry.PatchResize(r.Context(), st, info.Namespace, info.Name, pt, body, o.WriteOptions)
	default:
		methodNotAllowed(w, r)
		return
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeObject(w, r, http.StatusOK, conv, out, nil)
}

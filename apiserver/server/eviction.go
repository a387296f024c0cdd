package server

import (
	"context"
	"net/http"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/request"
)

// evict answers POST pods/NAME/eviction, kube-apiserver's EvictionREST: the
// body is a policy/v1 Eviction naming the pod of the URL; the pod is
// deleted with the Eviction's DeleteOptions (grace period, preconditions,
// dry run) once its disruption budgets allow it, and the answer is a 201
// Status Success. A missing pod is the pod's 404.
func (s *Server) evict(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store, dry bool) {
	if info.Verb != "create" {
		methodNotAllowed(w, r)
		return
	}
	var ev api.Eviction
	if err := decodeBody(r, &ev, "policy/v1", "Eviction"); err != nil {
		writeError(w, r, err)
		return
	}
	if ev.Name != info.Name {
		writeError(w, r, apierrors.NewBadRequest("name in URL does not match name in Eviction object"))
		return
	}
	if ev.Namespace != "" && ev.Namespace != info.Namespace {
		writeError(w, r, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
		return
	}
	opts := ev.DeleteOptions
	if opts == nil {
		opts = &api.DeleteOptions{}
	}
	dry = dry || len(opts.DryRun) > 0
	ctx := r.Context()
	obj, err := st.Get(ctx, info.Namespace, info.Name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := disruptionAllowed(ctx, obj.(*api.Pod)); err != nil {
		writeError(w, r, err)
		return
	}
	if _, _, err := st.Delete(ctx, info.Namespace, info.Name, opts, dry); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusCreated, api.Status{TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: api.StatusSuccess, Code: http.StatusCreated})
}

// disruptionAllowed is where an eviction consults the pod's
// PodDisruptionBudgets, which this apiserver does not serve yet.
//
// TODO(poddisruptionbudgets): once policy/v1 PodDisruptionBudgets are
// served, do what kube-apiserver's EvictionREST does: a terminal pod (or,
// with unhealthyPodEvictionPolicy, a not-ready one) is deleted whatever
// its budgets say; more than one budget matching the pod is a 500
// ("This pod has more than one PodDisruptionBudget, which the eviction
// subresource does not support."); a budget whose status.disruptionsAllowed
// is 0 refuses with apierrors.NewTooManyRequests("Cannot evict pod as it
// would violate the pod's disruption budget.", 0) plus a DisruptionBudget
// cause naming the budget; otherwise decrement disruptionsAllowed and
// record the pod in status.disruptedPods (a conflict-checked update of
// the budget) before deleting with a resourceVersion precondition.
func disruptionAllowed(ctx context.Context, pod *api.Pod) error {
	return nil
}

package server

import (
	"context"
	"net/http"
	"slices"
	"time"

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
	pod := obj.(*api.Pod)
	if err := disruptionAllowed(ctx, pod); err != nil {
		writeError(w, r, err)
		return
	}
	if !dry {
		if opts, err = markDisruptionTarget(ctx, st, pod, opts); err != nil {
			writeError(w, r, err)
			return
		}
	}
	if _, _, err := st.Delete(ctx, info.Namespace, info.Name, opts, dry); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusCreated, api.Status{TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: api.StatusSuccess, Code: http.StatusCreated})
}

// markDisruptionTarget records on a running pod, before it is deleted, why
// it goes: kube's DisruptionTarget condition with reason
// EvictionByEvictionAPI, which Jobs' pod failure policies read. A pod
// already terminal or terminating, or one the eviction's preconditions do
// not match (the delete then reports the conflict), is left as it is. A
// resourceVersion precondition moves to the version the condition wrote,
// as kube-apiserver moves it.
func markDisruptionTarget(ctx context.Context, st *registry.Store, pod *api.Pod, opts *api.DeleteOptions) (*api.DeleteOptions, error) {
	if pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed || pod.DeletionTimestamp != nil {
		return opts, nil
	}
	if p := opts.Preconditions; p != nil && (p.UID != nil && *p.UID != pod.UID || p.ResourceVersion != nil && *p.ResourceVersion != pod.ResourceVersion) {
		return opts, nil
	}
	want := api.PodCondition{Type: api.DisruptionTarget, Status: api.ConditionTrue,
		Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: api.NewTime(time.Now())}
	updated := api.DeepCopy(pod)
	i := slices.IndexFunc(updated.Status.Conditions, func(c api.PodCondition) bool { return c.Type == api.DisruptionTarget })
	switch {
	case i < 0:
		updated.Status.Conditions = append(updated.Status.Conditions, want)
	case updated.Status.Conditions[i].Status == want.Status && updated.Status.Conditions[i].Reason == want.Reason:
		return opts, nil
	default:
		if updated.Status.Conditions[i].Status == want.Status {
			want.LastTransitionTime = updated.Status.Conditions[i].LastTransitionTime
		}
		updated.Status.Conditions[i] = want
	}
	out, _, err := st.Update(ctx, pod.Namespace, pod.Name, updated, registry.WriteOptions{Subresource: "status"})
	if err != nil {
		return nil, err
	}
	if opts.Preconditions != nil && opts.Preconditions.ResourceVersion != nil {
		rv := out.GetObjectMeta().ResourceVersion
		pre := *opts.Preconditions
		pre.ResourceVersion = &rv
		copied := *opts
		copied.Preconditions = &pre
		opts = &copied
	}
	return opts, nil
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

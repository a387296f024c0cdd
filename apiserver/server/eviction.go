package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
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
	unhealthy, err := s.disruptionAllowed(ctx, pod, dry)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if unhealthy && (opts.Preconditions == nil || opts.Preconditions.ResourceVersion == nil) {
		// Let through as not ready: it must still be the pod that was
		// judged, not one that became ready since (kube-apiserver adds
		// the same precondition).
		pre := api.Preconditions{}
		if opts.Preconditions != nil {
			pre = *opts.Preconditions
		}
		rv := pod.ResourceVersion
		pre.ResourceVersion = &rv
		copied := *opts
		copied.Preconditions = &pre
		opts = &copied
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
	// The kubelet writes pod status often: a write that lost the race is
	// made again on the pod as it is now (the budget is already spent).
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			obj, gerr := st.Get(ctx, pod.Namespace, pod.Name)
			if gerr != nil {
				return nil, gerr
			}
			pod = obj.(*api.Pod)
		}
		var out *api.DeleteOptions
		if out, err = markDisruptionTargetOnce(ctx, st, pod, opts); !apierrors.IsConflict(err) {
			return out, err
		}
	}
	return nil, err
}

func markDisruptionTargetOnce(ctx context.Context, st *registry.Store, pod *api.Pod, opts *api.DeleteOptions) (*api.DeleteOptions, error) {
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
// PodDisruptionBudgets, as kube-apiserver's EvictionREST does: a terminal,
// pending or terminating pod is deleted whatever its budgets say; more than one budget matching
// the pod is a 500; a budget whose status.disruptionsAllowed is 0 (or
// whose status the disruption controller has not yet written for its
// current generation) refuses with a 429 naming the budget; otherwise the
// budget's disruptionsAllowed is decremented and the pod recorded in
// status.disruptedPods, a conflict-checked update of the budget made
// before the pod is deleted. A dry run checks without writing.
func (s *Server) disruptionAllowed(ctx context.Context, pod *api.Pod, dry bool) (unhealthy bool, err error) {
	// Pods that are finished, not yet running, or already going are not
	// counted by any budget (kube's canIgnorePDB).
	if pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed ||
		pod.Status.Phase == api.PodPending || pod.DeletionTimestamp != nil {
		return false, nil
	}
	pdbs := s.stores["policy/poddisruptionbudgets"]
	if pdbs == nil {
		return false, nil
	}
	list, err := pdbs.List(ctx, pod.Namespace, registry.ListOptions{})
	if err != nil {
		return false, err
	}
	var matched []*api.PodDisruptionBudget
	for _, it := range list.Items {
		pdb := it.Object.(*api.PodDisruptionBudget)
		if pdb.Spec.Selector == nil {
			continue
		}
		sel, err := labels.SelectorFromLabelSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		matched = append(matched, pdb)
	}
	switch len(matched) {
	case 0:
		return false, nil
	case 1:
	default:
		return false, apierrors.NewInternalError(errors.New("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."))
	}
	// As kube-apiserver, a budget changed under us (a concurrent eviction,
	// the controller's status write) is read again and checked afresh.
	var err2 error
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			obj, err := pdbs.Get(ctx, matched[0].Namespace, matched[0].Name)
			if err != nil {
				return false, err
			}
			matched[0] = obj.(*api.PodDisruptionBudget)
		}
		if unhealthy, err2 = checkAndSpend(ctx, pdbs, matched[0], pod, dry); !apierrors.IsConflict(err2) {
			return unhealthy, err2
		}
	}
	return false, err2
}

// checkAndSpend refuses the eviction of pod when pdb allows no
// disruption, else spends one (unless dry) with a conflict-checked update.
func checkAndSpend(ctx context.Context, pdbs *registry.Store, cur *api.PodDisruptionBudget, pod *api.Pod, dry bool) (unhealthy bool, err error) {
	pdb := api.DeepCopy(cur)
	// An unhealthy pod (not Ready) may go when the budget says so, or when
	// the budget is already met (IfHealthyBudget, the default).
	if !podReady(pod) {
		if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == "AlwaysAllow" {
			return true, nil
		}
		if pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
			return true, nil
		}
	}
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return false, tooManyRequests(fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdb.Name))
	}
	if pdb.Status.DisruptionsAllowed < 0 {
		return false, apierrors.NewForbidden(apierrors.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, pdb.Name, errors.New("pdb disruptions allowed is negative"))
	}
	if len(pdb.Status.DisruptedPods) > maxDisruptedPodSize {
		return false, apierrors.NewForbidden(apierrors.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, pdb.Name, errors.New("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
	}
	if pdb.Status.DisruptionsAllowed == 0 {
		return false, tooManyRequests(fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy))
	}
	if dry {
		return false, nil
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptionsAllowed == 0 {
		pdb.Status.Conditions = setPDBCondition(pdb.Status.Conditions, pdb.Generation, api.ConditionFalse, "InsufficientPods", "")
	}
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]api.Time{}
	}
	pdb.Status.DisruptedPods[pod.Name] = api.NewTime(time.Now())
	// The update carries the budget's resourceVersion: a concurrent
	// eviction that spent the same disruption makes this one a 409.
	if _, _, err := pdbs.Update(ctx, pdb.Namespace, pdb.Name, pdb, registry.WriteOptions{Subresource: "status"}); err != nil {
		return false, err
	}
	return false, nil
}

// maxDisruptedPodSize is kube's bound on evictions the disruption
// controller has not confirmed yet.
const maxDisruptedPodSize = 2000

// tooManyRequests is kube's refusal of an eviction by a budget.
func tooManyRequests(cause string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	if err.ErrStatus.Details == nil {
		err.ErrStatus.Details = &api.StatusDetails{}
	}
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, api.StatusCause{Type: "DisruptionBudget", Message: cause})
	return err
}

func podReady(pod *api.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == api.PodReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

// setPDBCondition sets the DisruptionAllowed condition, keeping its
// transition time when the status does not change.
func setPDBCondition(conds []api.Condition, gen int64, status string, reason, msg string) []api.Condition {
	c := api.Condition{Type: "DisruptionAllowed", Status: status, Reason: reason, Message: msg,
		ObservedGeneration: gen, LastTransitionTime: api.NewTime(time.Now())}
	for i := range conds {
		if conds[i].Type == c.Type {
			if conds[i].Status == c.Status {
				c.LastTransitionTime = conds[i].LastTransitionTime
			}
			conds[i] = c
			return conds
		}
	}
	return append(conds, c)
}
